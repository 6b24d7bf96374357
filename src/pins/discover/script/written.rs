//! Where a statement writes a knob or a fact: flags in a command's words or an argument array, keys of
//! JSON (quoted, escaped, in a `printf` template, in a heredoc), `KEY: value` lines of a heredoc, and
//! `NAME=value` pairs inside strings later spliced into a command. Read once per script; the values are
//! resolved later, per environment.

use crate::bash::word::{Template, Value, Word};
use crate::bash::{AssignValue, Command, Script, Stmt, StmtKind};
use crate::pins::Knob;

/// What a statement says about a pin's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FactKind {
    /// Draft length.
    K,
    /// Served model.
    Model,
    /// Draft model.
    Drafter,
    /// Speculative method.
    Method,
    /// Draft sampling.
    Sampling,
    /// Thinking mode.
    Thinking,
    /// Reasoning effort of a thinking model.
    Effort,
}

/// Variables that hold a fact by convention when no flag writes it.
pub(super) fn conventional(kind: FactKind) -> &'static [&'static str] {
    match kind {
        FactKind::K => &[
            "NUM_SPEC_TOKENS",
            "NUM_SPECULATIVE_TOKENS",
            "SPEC_NUM_TOKENS",
            "SPEC_NUM_STEPS",
            "SPECULATIVE_NUM_STEPS",
            "DECODE_MTP_SIZE",
            "MTP_K",
            "SPEC_K",
            "DRAFT_LEN",
            "LLAMA_ARG_SPEC_DRAFT_N_MAX",
        ],
        FactKind::Model => &["MODEL", "MODEL_NAME", "HF_MODEL_ID", "HF_MODEL"],
        FactKind::Drafter => &["DRAFT_MODEL", "DRAFT_MODEL_PATH", "SPEC_MODEL"],
        FactKind::Method => &["SPEC_METHOD", "SPEC_ALGO", "SPECULATIVE_ALGORITHM"],
        FactKind::Sampling => &["DRAFT_SAMPLE_METHOD"],
        FactKind::Thinking | FactKind::Effort => &[],
    }
}

/// A fact written in a statement: its value, and (thinking) how to read the value.
#[derive(Debug, Clone)]
pub(super) struct FactSite {
    pub(super) kind: FactKind,
    pub(super) value: Value,
    /// For thinking: the setting's name (`thinking_mode`, `--chat-template`, `AIPERF_EXTRA_INPUTS`).
    pub(super) key: &'static str,
}

/// The facts each statement of every script writes, by script index; a script's are read the first time a
/// script that sources it needs them, once for the whole scan.
#[derive(Debug, Default)]
pub(crate) struct WrittenFacts(Vec<std::sync::OnceLock<Vec<Vec<FactSite>>>>);

impl WrittenFacts {
    /// Room for the facts of `scripts` scripts, none read yet.
    pub(crate) fn new(scripts: usize) -> WrittenFacts {
        WrittenFacts((0..scripts).map(|_| std::sync::OnceLock::new()).collect())
    }

    /// The facts each statement of `script`, the script at `index`, writes.
    pub(super) fn of(&self, index: usize, script: &Script) -> &[Vec<FactSite>] {
        self.0[index].get_or_init(|| script.stmts.iter().map(|s| fact_sites(s, &streams(script, s))).collect())
    }
}

/// One place a knob is written.
#[derive(Debug, Clone)]
pub(super) struct Site {
    pub(super) knob: Knob,
    pub(super) value: Value,
    pub(super) line: usize,
    /// The variable whose value carries the knob to the engine (`SPEC_CONFIG`), when inside an assignment.
    pub(super) carrier: Option<String>,
    /// The knob is itself an environment assignment (`export SGLANG_SIMULATE_ACC_LEN=…`).
    pub(super) env_name: Option<String>,
    /// Exported, or set as a command's prefix.
    pub(super) exported: bool,
    /// Other keys of the same JSON/string (`rejection_sample_method`, the SGLang companions).
    pub(super) siblings: Vec<(String, String)>,
}

pub(super) const THINKING_JSON: &[&str] = &["thinking_mode", "enable_thinking", "thinking"];

pub(super) fn flag_value(words: &[Value], flag: &str) -> Vec<Value> {
    (0..words.len()).filter_map(|i| option_value(words, i, flag)).collect()
}

/// The value `words[i]` gives `flag`: the next word after `flag`, or the rest of `flag=value`.
fn option_value(words: &[Value], i: usize, flag: &str) -> Option<Value> {
    let Value::Lit { text, span } = &words[i] else { return None };
    if text == flag {
        words.get(i + 1).cloned()
    } else {
        let rest = text.strip_prefix(flag)?.strip_prefix('=')?;
        let span = span.map(|(s, e)| (e - rest.len(), e).max((s, s)));
        Some(Value::Lit { text: rest.to_string(), span })
    }
}

/// The options (`-…` words) of a statement's token streams, found in one pass: a statement's facts look
/// up some twenty flags, and a pass over every stream per flag was most of reading a script's facts.
struct Options<'s> {
    streams: &'s [Vec<Value>],
    /// (the option's name — its text up to any `=` —, stream, word), in stream and word order.
    at: Vec<(&'s str, usize, usize)>,
}

impl<'s> Options<'s> {
    fn new(streams: &'s [Vec<Value>]) -> Options<'s> {
        let mut at = Vec::new();
        for (si, stream) in streams.iter().enumerate() {
            for (i, w) in stream.iter().enumerate() {
                if let Value::Lit { text, .. } = w
                    && text.starts_with('-')
                {
                    at.push((text.split_once('=').map_or(text.as_str(), |(name, _)| name), si, i));
                }
            }
        }
        Options { streams, at }
    }

    /// What [`flag_value`] gives over every stream, in order, for an option `flag` (no `=` in it).
    fn values(&self, flag: &str) -> Vec<Value> {
        debug_assert!(flag.starts_with('-') && !flag.contains('='), "{flag}");
        self.at
            .iter()
            .filter(|(name, _, _)| *name == flag)
            .filter_map(|&(_, si, i)| option_value(&self.streams[si], i, flag))
            .collect()
    }
}

/// The token streams of a statement: command words, array elements, and the whitespace-split text of
/// string values (flags inside `ARGS="--x $V"`).
pub(super) fn streams(script: &Script, stmt: &Stmt) -> (Vec<Vec<Value>>, Vec<Template>) {
    let mut streams = Vec::new();
    let mut templates = Vec::new();
    let add_words = |words: &[Word], streams: &mut Vec<Vec<Value>>, templates: &mut Vec<Template>| {
        let mut stream = Vec::new();
        for w in words {
            let t = script.template(w);
            let tokens = t.tokens();
            if tokens.len() > 1 {
                streams.push(tokens);
            }
            stream.push(w.value());
            templates.push(t);
        }
        streams.push(stream);
    };
    match &stmt.kind {
        StmtKind::Assign(a) => add_words(a.value.words(), &mut streams, &mut templates),
        StmtKind::Command(c) => {
            add_words(&c.words, &mut streams, &mut templates);
            for e in &c.env {
                add_words(e.value.words(), &mut streams, &mut templates);
            }
            for h in &c.heredocs {
                templates.push(script.template(h));
            }
        }
    }
    (streams, templates)
}

/// The facts a statement writes, from its [`streams`] (read once for facts and sites).
pub(super) fn fact_sites(stmt: &Stmt, (streams, templates): &(Vec<Vec<Value>>, Vec<Template>)) -> Vec<FactSite> {
    let mut out = Vec::new();
    let mut push = |kind, key, values: Vec<Value>| {
        out.extend(values.into_iter().map(|value| FactSite { kind, value, key }));
    };
    let options = Options::new(streams);
    let flags = |flag: &str| options.values(flag);
    // DSpark in SGLang: k is the draft block, not `--speculative-num-steps 1` (docs/engines.md#sglang).
    let dspark = flags("--speculative-algorithm")
        .iter()
        .any(|v| matches!(v, Value::Lit { text, .. } if text.eq_ignore_ascii_case("dspark")));
    let block = flags("--speculative-dspark-block-size");
    if !block.is_empty() {
        push(FactKind::K, "--speculative-dspark-block-size", block);
    } else if dspark {
        push(FactKind::K, "--speculative-num-draft-tokens", flags("--speculative-num-draft-tokens"));
    } else {
        for flag in ["--num-speculative-tokens", "--speculative-num-steps", "--max-draft-len", "--spec-draft-n-max"] {
            push(FactKind::K, "flag", flags(flag));
        }
    }
    push(FactKind::Model, "--served-model-name", flags("--served-model-name"));
    for flag in ["--model", "--model-path"] {
        push(FactKind::Model, "--model", flags(flag));
    }
    if let StmtKind::Command(c) = &stmt.kind {
        push(FactKind::Model, "serve", serve_positional(c));
    }
    for flag in [
        "--draft-model",
        "--model-draft",
        "--speculative-draft-model-path",
        "--speculative-draft-model",
        "--speculative-model",
    ] {
        push(FactKind::Drafter, "flag", flags(flag));
    }
    for flag in ["--speculative-algorithm", "--method", "--speculative-method"] {
        push(FactKind::Method, "flag", flags(flag));
    }
    push(FactKind::Thinking, "--dyn-default-thinking-mode", flags("--dyn-default-thinking-mode"));
    push(FactKind::Thinking, "--chat-template", flags("--chat-template"));
    for t in templates {
        let spec_json = [
            "num_speculative_tokens",
            "synthetic_acceptance_length",
            "synthetic_acceptance_rates",
            "\"method\"",
            "speculative_config",
        ]
        .iter()
        .any(|k| t.text.contains(k));
        if !dspark {
            push(FactKind::K, "json", t.json("num_speculative_tokens"));
            push(FactKind::K, "json", t.json("max_draft_len"));
            push(FactKind::K, "yaml", t.yaml("max_draft_len"));
        }
        if spec_json {
            push(FactKind::Drafter, "json", t.json("model"));
            push(FactKind::Method, "json", t.json("method"));
        }
        push(FactKind::Drafter, "yaml", t.yaml("speculative_model"));
        push(FactKind::Drafter, "yaml", t.yaml("speculative_model_dir"));
        push(FactKind::Method, "yaml", t.yaml("decoding_type"));
        push(FactKind::Sampling, "json", t.json("draft_sample_method"));
        for key in THINKING_JSON {
            push(FactKind::Thinking, key, t.json(key));
        }
        push(FactKind::Effort, "reasoning_effort", t.json("reasoning_effort"));
        if t.text.contains("thinking") && !t.text.contains('{') {
            // `AIPERF_EXTRA_INPUTS="thinking:true"` sets the request's chat-template kwargs.
            for token in t.tokens() {
                if let Value::Lit { text, span } = token
                    && let Some(v) = text.strip_prefix("thinking:")
                {
                    push(FactKind::Thinking, "thinking:", vec![Value::Lit { text: v.to_string(), span }]);
                }
            }
        }
    }
    for (a, _) in env_assigns(stmt) {
        let AssignValue::Scalar(w) = &a.value else { continue };
        let (kind, key) = match a.name.as_str() {
            "SGLANG_DEFAULT_THINKING" => (FactKind::Thinking, "SGLANG_DEFAULT_THINKING"),
            "DYN_DEFAULT_THINKING_MODE" => (FactKind::Thinking, "DYN_DEFAULT_THINKING_MODE"),
            "SGLANG_DSV4_REASONING_EFFORT" => (FactKind::Effort, "SGLANG_DSV4_REASONING_EFFORT"),
            "SGLANG_REASONING_EFFORT" => (FactKind::Effort, "SGLANG_REASONING_EFFORT"),
            "LLAMA_ARG_SPEC_DRAFT_N_MAX" => (FactKind::K, "LLAMA_ARG_SPEC_DRAFT_N_MAX"),
            _ => continue,
        };
        push(kind, key, vec![w.value()]);
    }
    out
}

/// The environment assignments a statement makes, and whether each reaches child processes (a command's
/// prefix assignments always do).
fn env_assigns(stmt: &Stmt) -> Vec<(&crate::bash::Assign, bool)> {
    match &stmt.kind {
        StmtKind::Assign(a) => vec![(a, a.exported)],
        StmtKind::Command(c) => c.env.iter().map(|e| (e, true)).collect(),
    }
}

/// `vllm serve MODEL`, `trtllm-serve MODEL`.
pub(super) fn serve_positional(c: &Command) -> Vec<Value> {
    let words: Vec<Option<String>> = c.words.iter().map(Word::literal).collect();
    for (i, w) in words.iter().enumerate() {
        let serve = w.as_deref().is_some_and(|w| {
            w.ends_with("trtllm-serve") || i > 0 && words[i - 1].as_deref().is_some_and(|p| vllm_serve(p, w))
        });
        if serve
            && let Some(next) = c.words.get(i + 1)
            && next.literal().is_none_or(|l| !l.starts_with('-'))
        {
            return vec![next.value()];
        }
    }
    Vec::new()
}

/// Whether `word` after `before` is vLLM's start written as two words, `vllm serve` (or `/path/vllm serve`).
pub(super) fn vllm_serve(before: &str, word: &str) -> bool {
    word == "serve" && before.ends_with("vllm")
}

/// The knob sites of a statement, from its [`streams`].
pub(super) fn sites_of(stmt: &Stmt, (streams, templates): &(Vec<Vec<Value>>, Vec<Template>)) -> Vec<Site> {
    let mut out = Vec::new();
    let carrier = match &stmt.kind {
        StmtKind::Assign(a) => Some(a.name.clone()),
        StmtKind::Command(_) => None,
    };
    // A knob written inside the statement's text (JSON, `NAME=value` in a string, a flag).
    let inside = |knob, value, exported, siblings| Site {
        knob,
        value,
        line: stmt.line,
        carrier: carrier.clone(),
        env_name: None,
        exported,
        siblings,
    };
    // Environment assignments of the knob itself.
    for (a, exported) in env_assigns(stmt) {
        if let (Some(knob), AssignValue::Scalar(w)) = (Knob::of_env(&a.name), &a.value) {
            out.push(Site {
                knob,
                value: w.value(),
                line: a.line,
                carrier: None,
                env_name: Some(a.name.clone()),
                exported,
                siblings: Vec::new(),
            });
        }
    }
    for t in templates {
        let pairs: Vec<(String, String)> = ["rejection_sample_method"]
            .iter()
            .flat_map(|k| {
                t.json(k).into_iter().filter_map(move |v| match v {
                    Value::Lit { text, .. } => Some((k.to_string(), text)),
                    Value::Hole(_) => None,
                })
            })
            .collect();
        let lengths = t.json("synthetic_acceptance_length").into_iter().map(|v| (Knob::VllmSyntheticLength, v));
        let lists = t.json_list("synthetic_acceptance_rates").into_iter().map(|v| (Knob::VllmSyntheticRates, v));
        for (knob, value) in lengths.chain(lists) {
            out.push(inside(knob, value, false, pairs.clone()));
        }
        let assigns = t.assignments();
        let names: Vec<(String, String)> = assigns
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    match v {
                        Value::Lit { text, .. } => text.clone(),
                        Value::Hole(_) => "$…".into(),
                    },
                )
            })
            .collect();
        for (name, value) in assigns {
            if let Some(knob) = Knob::of_env(&name) {
                out.push(inside(knob, value, true, names.clone()));
            }
        }
    }
    for stream in streams {
        // llama.cpp's merged code spells its knobs `--spec-synth-*`; the PR's description (and recipes copied
        // from it) `--spec-synthetic-acceptance-*`: both are read.
        for (flag, knob) in [
            ("--spec-decode-acceptance-length", Knob::AtomLength),
            ("--spec-decode-acceptance-rate", Knob::AtomRate),
            ("--spec-synth-len", Knob::LlamacppLength),
            ("--spec-synthetic-acceptance-length", Knob::LlamacppLength),
            ("--spec-synth-rates", Knob::LlamacppRates),
            ("--spec-synthetic-acceptance-rates", Knob::LlamacppRates),
        ] {
            out.extend(flag_value(stream, flag).into_iter().map(|value| inside(knob, value, false, Vec::new())));
        }
    }
    // A string and its own whitespace split both list an inner flag: keep one.
    out.dedup_by(|a, b| a.knob == b.knob && a.line == b.line && a.value == b.value);
    out
}
