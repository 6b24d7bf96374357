//! Shell words as the parser splits them, with every literal piece tied to its bytes in the file.
//!
//! brush-parser gives a word's raw text and, through [`brush_parser::word::parse`], its pieces (quoted
//! text, escapes, `${…}`, `$(…)`, `$((…))`). A [`Word`] keeps those pieces ([`Part`]) with the byte
//! span of each literal, so a pin written as a literal can be edited in place by `alsim pins fix`.
//!
//! Text that carries structure of its own — JSON inside a quoted `--speculative-config`, a `printf`
//! template whose `%s`/`%d`/`%.2f` are bound to its arguments, a heredoc — is rendered to a [`Template`]:
//! the literal characters, with one placeholder character standing for each expansion ([`Hole`]).
//! The scanners ([`Template::json`], [`Template::yaml`], [`Template::assignments`]) read keys and values
//! out of a template without ever guessing at an expansion's value; that is the resolver's job.

use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

/// A byte range in the file the word came from.
pub(crate) type Span = (usize, usize);

/// One piece of a word.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Literal text after quote removal; `span` is its place in the file when the text is written there
    /// verbatim (not for escapes).
    Lit {
        /// The text.
        text: String,
        /// Its bytes in the file.
        span: Option<Span>,
    },
    /// `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME%%pattern}`, `$1`.
    Var {
        /// The variable (`1` for `$1`).
        name: String,
        /// What the expansion does with the value.
        op: VarOp,
    },
    /// `$(…)` or `` `…` ``: the command text and the byte where it starts in the file.
    Cmd {
        /// The command text.
        body: String,
        /// Its first byte in the file.
        start: usize,
    },
    /// `$((…))`.
    Arith(String),
    /// An expansion the resolver does not follow (`${#X}`, `${X/a/b}`, `$@`, …), as written.
    Other(String),
}

/// What a parameter expansion does with the variable's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum VarOp {
    /// The value itself.
    Plain,
    /// `${X:-word}` / `${X-word}` (and `:=`): the word when `X` is unset.
    Default(Box<Word>),
    /// `${X%pat}`, `${X%%pat}`, `${X#pat}`, `${X##pat}`.
    Strip {
        /// `%`/`%%` (else `#`/`##`).
        suffix: bool,
        /// `%%`/`##`.
        largest: bool,
        /// The glob removed.
        pattern: String,
    },
}

/// A shell word: its pieces, the line it starts on and its raw text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    /// The pieces, in order.
    pub parts: Vec<Part>,
    /// 1-based line of the word's first character.
    pub line: usize,
    /// The word as written.
    pub raw: String,
}

impl Word {
    /// The word as a template value: its literal, or the word to resolve.
    pub(crate) fn value(&self) -> Value {
        match (self.literal(), self.parts.as_slice()) {
            (Some(text), _) => Value::Lit { text, span: self.literal_span() },
            (None, [part]) => Value::Hole(Hole::Part(part.clone())),
            _ => Value::Hole(Hole::Word(self.clone())),
        }
    }

    /// The text when the word is one literal (after quote removal), e.g. `--num-speculative-tokens`.
    pub(crate) fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The file span of a word that is one literal written verbatim.
    pub(crate) fn literal_span(&self) -> Option<Span> {
        match self.parts.as_slice() {
            [Part::Lit { span, .. }] => *span,
            _ => None,
        }
    }

    /// The variable a word reads when it is exactly one expansion (`"$K"`, `${K:-3}`).
    pub(crate) fn sole_variable(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Var { name, .. }] => Some(name),
            _ => None,
        }
    }

    /// Whether any piece reads `name`.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Var { name: n, op } => n == name || matches!(op, VarOp::Default(w) if w.reads(name)),
            Part::Cmd { body, .. } | Part::Arith(body) | Part::Other(body) => mentions(body, name),
            Part::Lit { .. } => false,
        })
    }
}

/// Whether `$name` or `${name…}` appears in raw shell text.
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = text[from..].find(name) {
        let at = from + pos;
        from = at + name.len();
        let before = &text[..at];
        let after = text[from..].chars().next();
        let ends = after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        if ends && (before.ends_with('$') || before.ends_with("${") || before.ends_with("${!")) {
            return true;
        }
        // Arithmetic names its variables bare: `$((1 + NUM_SPEC_TOKENS))`.
        if ends && before.ends_with(|c: char| " (+-*/".contains(c)) && text.contains("((") {
            return true;
        }
    }
    false
}

/// Maps brush-parser's character positions to byte offsets of one text.
#[derive(Debug, Clone)]
pub(crate) struct Source<'a> {
    /// The text the parser read.
    pub text: &'a str,
    /// Byte offset of `text` in the file.
    pub base: usize,
    /// When the text is not ASCII: its characters that are not, each as its character index and the bytes
    /// the characters after it lie past their index, and the number of characters. Only those, since a
    /// script that is not ASCII has few such characters, where a map of every character's byte would cost
    /// eight bytes a character.
    wide: Option<(Vec<(usize, usize)>, usize)>,
}

impl<'a> Source<'a> {
    /// A text starting at byte `base` of its file.
    pub(crate) fn new(text: &'a str, base: usize) -> Source<'a> {
        let wide = (!text.is_ascii()).then(|| {
            let (mut wide, mut extra, mut chars) = (Vec::new(), 0, 0);
            for (i, c) in text.chars().enumerate() {
                if !c.is_ascii() {
                    extra += c.len_utf8() - 1;
                    wide.push((i, extra));
                }
                chars = i + 1;
            }
            (wide, chars)
        });
        Source { text, base, wide }
    }

    /// The file byte of the parser's 0-based character index.
    pub(crate) fn byte(&self, char_index: usize) -> usize {
        let local = match &self.wide {
            None => char_index,
            Some((_, chars)) if char_index >= *chars => self.text.len(),
            Some((wide, _)) => {
                let before = wide.partition_point(|&(i, _)| i < char_index);
                char_index + before.checked_sub(1).map_or(0, |at| wide[at].1)
            }
        };
        self.base + local
    }
}

/// The characters that start a quote, escape or expansion: a word without them is plain text.
const SPECIAL: [char; 6] = ['$', '`', '\'', '"', '\\', '~'];

/// Converts a brush word whose raw text starts at file byte `start` on `line`.
pub(crate) fn convert(raw: &str, start: usize, line: usize) -> Word {
    // Most words are plain (`--port`, `vllm`): no quote, escape or expansion to take apart.
    let parsed = raw.contains(SPECIAL).then(|| simple_pieces(raw).or_else(|| brush_pieces(raw))).flatten();
    from_pieces(raw, start, line, false, parsed)
}

fn brush_pieces(raw: &str) -> Option<Vec<WordPieceWithSource>> {
    brush_parser::word::parse(raw, &brush_parser::ParserOptions::default()).ok()
}

/// brush's pieces of a word made only of what most scripts' words are made of — text, `'…'`, `"…"`,
/// backslash escapes, `$NAME`, `$1`…`$9`, `$?` (and the other special parameters), `${NAME}`,
/// `${NAME[@]}` and `${NAME:-text}` (also `-`, `:=`, `=`) — read
/// without brush's grammar, which costs some 17k instructions a word and was a tenth of `pins check` on
/// the InferenceX snapshot. `None` for anything else (substitutions, arithmetic, `~`, other expansions,
/// an unclosed quote): brush reads those.
fn simple_pieces(raw: &str) -> Option<Vec<WordPieceWithSource>> {
    let b = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let from = i;
        let piece = match b[i] {
            b'\'' => {
                let end = i + 1 + raw[i + 1..].find('\'')?;
                i = end + 1;
                WordPiece::SingleQuotedText(raw[from + 1..end].to_string())
            }
            b'"' => {
                i += 1;
                let mut inner = Vec::new();
                loop {
                    let at = i;
                    let piece = match *b.get(i)? {
                        b'"' => break,
                        b'`' => return None,
                        b'\\' if escapes_in_quotes(b.get(i + 1)) => {
                            i += 2;
                            WordPiece::EscapeSequence(raw[at..i].to_string())
                        }
                        b'$' => {
                            let (piece, next) = dollar(raw, i)?;
                            i = next;
                            piece
                        }
                        _ => {
                            // A backslash before any other character is text in double quotes.
                            i += 1;
                            while i < b.len()
                                && !matches!(b[i], b'"' | b'$' | b'`')
                                && !(b[i] == b'\\' && escapes_in_quotes(b.get(i + 1)))
                            {
                                i += 1;
                            }
                            WordPiece::Text(raw[at..i].to_string())
                        }
                    };
                    inner.push(WordPieceWithSource { piece, start_index: at, end_index: i });
                }
                i += 1;
                WordPiece::DoubleQuotedSequence(inner)
            }
            b'$' => {
                let (piece, next) = dollar(raw, i)?;
                i = next;
                piece
            }
            b'\\' => {
                i += 1 + raw[i + 1..].chars().next()?.len_utf8();
                WordPiece::EscapeSequence(raw[from..i].to_string())
            }
            b'`' | b'~' => return None,
            _ => {
                i = raw[i..].find(SPECIAL).map_or(raw.len(), |n| i + n);
                WordPiece::Text(raw[from..i].to_string())
            }
        };
        out.push(WordPieceWithSource { piece, start_index: from, end_index: i });
    }
    Some(out)
}

/// Whether a backslash before `next` escapes it inside double quotes.
fn escapes_in_quotes(next: Option<&u8>) -> bool {
    matches!(next, Some(b'$' | b'`' | b'"' | b'\\'))
}

/// The expansion at `raw[at] == '$'` and the byte after it, for the forms [`simple_pieces`] reads.
fn dollar(raw: &str, at: usize) -> Option<(WordPiece, usize)> {
    use brush_parser::word::{ParameterTestType, SpecialParameter};
    let b = raw.as_bytes();
    let name_end = |from: usize| {
        let first = *b.get(from)?;
        (first.is_ascii_alphabetic() || first == b'_')
            .then(|| from + b[from..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count())
    };
    let plain = |parameter| ParameterExpr::Parameter { parameter, indirect: false };
    match *b.get(at + 1)? {
        d @ b'1'..=b'9' => {
            Some((WordPiece::ParameterExpansion(plain(Parameter::Positional(u32::from(d - b'0')))), at + 2))
        }
        c @ (b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!' | b'0') => {
            let special = match c {
                b'@' | b'*' => SpecialParameter::AllPositionalParameters { concatenate: c == b'*' },
                b'#' => SpecialParameter::PositionalParameterCount,
                b'?' => SpecialParameter::LastExitStatus,
                b'-' => SpecialParameter::CurrentOptionFlags,
                b'$' => SpecialParameter::ProcessId,
                b'!' => SpecialParameter::LastBackgroundProcessId,
                _ => SpecialParameter::ShellName,
            };
            Some((WordPiece::ParameterExpansion(plain(Parameter::Special(special))), at + 2))
        }
        b'{' => {
            let end = name_end(at + 2)?;
            let name = raw[at + 2..end].to_string();
            let every = match b.get(end..end + 4) {
                Some(b"[@]}") => Some(false),
                Some(b"[*]}") => Some(true),
                _ => None,
            };
            if let Some(concatenate) = every {
                let parameter = Parameter::NamedWithAllIndices { name, concatenate };
                return Some((WordPiece::ParameterExpansion(plain(parameter)), end + 4));
            }
            let parameter = Parameter::Named(name);
            let (test_type, assign, value_from) = match (*b.get(end)?, b.get(end + 1).copied()) {
                (b'}', _) => return Some((WordPiece::ParameterExpansion(plain(parameter)), end + 1)),
                (b':', Some(op @ (b'-' | b'='))) => (ParameterTestType::UnsetOrNull, op == b'=', end + 2),
                (op @ (b'-' | b'='), _) => (ParameterTestType::Unset, op == b'=', end + 1),
                _ => return None,
            };
            let close = value_from + raw[value_from..].find('}')?;
            let value = &raw[value_from..close];
            if value.contains(SPECIAL) {
                return None;
            }
            let default_value = Some(value.to_string());
            let expr = if assign {
                ParameterExpr::AssignDefaultValues { parameter, indirect: false, test_type, default_value }
            } else {
                ParameterExpr::UseDefaultValues { parameter, indirect: false, test_type, default_value }
            };
            Some((WordPiece::ParameterExpansion(expr), close + 1))
        }
        _ => {
            let end = name_end(at + 1)?;
            Some((WordPiece::ParameterExpansion(plain(Parameter::Named(raw[at + 1..end].to_string()))), end))
        }
    }
}

/// Converts a heredoc body (quotes are literal there; expansions only when the delimiter is unquoted).
pub(crate) fn convert_heredoc(raw: &str, start: usize, line: usize, expands: bool) -> Word {
    let parsed =
        expands.then(|| brush_parser::word::parse_heredoc(raw, &brush_parser::ParserOptions::default()).ok()).flatten();
    from_pieces(raw, start, line, true, parsed)
}

/// The word of brush's pieces, or all literal text where there are none (plain, or not parsable).
fn from_pieces(raw: &str, start: usize, line: usize, heredoc: bool, pieces: Option<Vec<WordPieceWithSource>>) -> Word {
    let parts = match pieces {
        Some(pieces) => {
            let mut parts = Vec::new();
            pieces_to_parts(&pieces, raw, start, heredoc, &mut parts);
            merge_literals(parts)
        }
        None => vec![Part::Lit { text: raw.to_string(), span: Some((start, start + raw.len())) }],
    };
    Word { parts, line, raw: raw.to_string() }
}

fn pieces_to_parts(pieces: &[WordPieceWithSource], raw: &str, start: usize, heredoc: bool, out: &mut Vec<Part>) {
    for piece in pieces {
        let (from, to) = (piece.start_index, piece.end_index);
        let source = raw.get(from..to).unwrap_or_default();
        match &piece.piece {
            WordPiece::Text(text) => out.push(Part::Lit { text: text.clone(), span: Some((start + from, start + to)) }),
            WordPiece::SingleQuotedText(text) if heredoc => {
                out.push(Part::Lit { text: format!("'{text}'"), span: Some((start + from, start + to)) })
            }
            WordPiece::SingleQuotedText(text) => {
                out.push(Part::Lit { text: text.clone(), span: Some((start + from + 1, start + to - 1)) })
            }
            WordPiece::AnsiCQuotedText(text) => out.push(Part::Lit { text: text.clone(), span: None }),
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                if heredoc {
                    out.push(Part::Lit { text: "\"".into(), span: Some((start + from, start + from + 1)) });
                }
                pieces_to_parts(inner, raw, start, heredoc, out);
                if heredoc {
                    out.push(Part::Lit { text: "\"".into(), span: Some((start + to - 1, start + to)) });
                }
            }
            WordPiece::EscapeSequence(text) => {
                out.push(Part::Lit { text: text.trim_start_matches('\\').to_string(), span: None })
            }
            WordPiece::TildeExpansion(_) => out.push(Part::Lit { text: "~".into(), span: None }),
            WordPiece::ParameterExpansion(expr) => out.push(parameter(expr, source, start + from)),
            WordPiece::CommandSubstitution(body) => out.push(Part::Cmd { body: body.clone(), start: start + from + 2 }),
            WordPiece::BackquotedCommandSubstitution(body) => {
                out.push(Part::Cmd { body: body.clone(), start: start + from + 1 })
            }
            WordPiece::ArithmeticExpression(expr) => out.push(Part::Arith(expr.value.clone())),
        }
    }
}

fn parameter_name(parameter: &Parameter) -> Option<String> {
    match parameter {
        Parameter::Named(name) => Some(name.clone()),
        Parameter::Positional(n) => Some(n.to_string()),
        Parameter::NamedWithIndex { name, .. } | Parameter::NamedWithAllIndices { name, .. } => Some(name.clone()),
        Parameter::Special(_) => None,
    }
}

fn parameter(expr: &ParameterExpr, source: &str, start: usize) -> Part {
    let other = || Part::Other(source.to_string());
    match expr {
        ParameterExpr::Parameter { parameter, indirect: false } => match parameter_name(parameter) {
            Some(name) => Part::Var { name, op: VarOp::Plain },
            None => other(),
        },
        ParameterExpr::UseDefaultValues { parameter, indirect: false, default_value, .. }
        | ParameterExpr::AssignDefaultValues { parameter, indirect: false, default_value, .. } => {
            let Some(name) = parameter_name(parameter) else { return other() };
            let default = default_value.clone().unwrap_or_default();
            // The default's place: after the operator that follows the name.
            let offset = source
                .find(&name)
                .map(|at| at + name.len())
                .and_then(|after| source[after..].find(default.as_str()).map(|d| after + d))
                .unwrap_or(0);
            let word = convert(&default, start + offset, 0);
            Part::Var { name, op: VarOp::Default(Box::new(word)) }
        }
        ParameterExpr::RemoveSmallestSuffixPattern { parameter, indirect: false, pattern }
        | ParameterExpr::RemoveLargestSuffixPattern { parameter, indirect: false, pattern }
        | ParameterExpr::RemoveSmallestPrefixPattern { parameter, indirect: false, pattern }
        | ParameterExpr::RemoveLargestPrefixPattern { parameter, indirect: false, pattern } => {
            let Some(name) = parameter_name(parameter) else { return other() };
            let suffix = matches!(
                expr,
                ParameterExpr::RemoveSmallestSuffixPattern { .. } | ParameterExpr::RemoveLargestSuffixPattern { .. }
            );
            let largest = matches!(
                expr,
                ParameterExpr::RemoveLargestSuffixPattern { .. } | ParameterExpr::RemoveLargestPrefixPattern { .. }
            );
            Part::Var { name, op: VarOp::Strip { suffix, largest, pattern: pattern.clone().unwrap_or_default() } }
        }
        _ => other(),
    }
}

/// Joins neighbouring literals that are contiguous in the file (or both unplaced, like escapes), so a
/// literal written verbatim keeps its span for `pins fix`.
fn merge_literals(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::with_capacity(parts.len());
    for part in parts {
        if let (Some(Part::Lit { text: prev, span: prev_span }), Part::Lit { text, span }) = (out.last_mut(), &part) {
            match (*prev_span, *span) {
                (Some((a, b)), Some((c, d))) if b == c => {
                    prev.push_str(text);
                    *prev_span = Some((a, d));
                    continue;
                }
                (None, None) => {
                    prev.push_str(text);
                    continue;
                }
                _ => {}
            }
        }
        out.push(part);
    }
    out
}

/// Applies a shell glob (`*`, `?`, `[…]` taken literally) to `text`.
///
/// This is bash's matching for the patterns of a script's `case` arms and `[[ == ]]` tests, which the reader
/// evaluates as bash would; the globs a user writes to alsim (allow entries, `--exclude`, the sweep's name map)
/// are globset's, the crate's one dialect.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// An expansion inside a [`Template`]: a part of a word, or a `printf` argument with its conversion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Hole {
    /// An expansion of the word itself.
    Part(Part),
    /// A whole word (a flag's argument, an assignment's value).
    Word(Word),
    /// The `n`-th `printf` argument, formatted by `spec` (`%s`, `%d`, `%.2f`).
    Printf {
        /// The argument, when the command has one for this conversion.
        arg: Option<Word>,
        /// The conversion (`%.2f`).
        spec: String,
    },
}

/// Characters that stand for holes: the private-use area, never written in scripts.
const HOLE_BASE: u32 = 0xE000;

/// Expands a `$(printf …)` body at a byte offset into its format and arguments, when it is one.
pub(crate) type PrintfExpander<'a> = dyn Fn(&str, usize) -> Option<(Word, Vec<Word>)> + 'a;

/// Text with holes where the expansions are, and where each literal came from in the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Template {
    /// The literal characters, one placeholder character per hole.
    pub text: String,
    /// The expansions, indexed by placeholder.
    pub holes: Vec<Hole>,
    /// (start, end) in `text` → start in the file, for literals written verbatim.
    origins: Vec<(usize, usize, usize)>,
}

/// A value read out of a template: a literal with its file span, or an expansion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// Written literally.
    Lit {
        /// The text.
        text: String,
        /// Its bytes in the file.
        span: Option<Span>,
    },
    /// An expansion to resolve.
    Hole(Hole),
}

impl Template {
    /// A template of literal text that starts at byte `file_start` of its file (a YAML string's
    /// content), so values read out of it keep their spans.
    pub(crate) fn literal(text: &str, file_start: Option<usize>) -> Template {
        let mut t = Template::default();
        t.push_lit(text, file_start.map(|s| (s, s + text.len())));
        t
    }

    /// Renders a word.
    pub(crate) fn of(word: &Word, printf: &PrintfExpander<'_>) -> Template {
        let mut t = Template::default();
        t.push_word(word, printf);
        t
    }

    fn push_lit(&mut self, text: &str, span: Option<Span>) {
        let start = self.text.len();
        self.text.push_str(text);
        if let Some((file_start, file_end)) = span
            && file_end - file_start == text.len()
        {
            self.origins.push((start, self.text.len(), file_start));
        }
    }

    fn push_hole(&mut self, hole: Hole) {
        let c = char::from_u32(HOLE_BASE + self.holes.len() as u32).unwrap_or('\u{FFFD}');
        self.holes.push(hole);
        self.text.push(c);
    }

    fn push_word(&mut self, word: &Word, printf: &PrintfExpander<'_>) {
        for part in &word.parts {
            match part {
                Part::Lit { text, span } => self.push_lit(text, *span),
                Part::Cmd { body, start } => match printf(body, *start) {
                    Some((format, args)) => self.push_printf(&format, args),
                    None => self.push_hole(Hole::Part(part.clone())),
                },
                other => self.push_hole(Hole::Part(other.clone())),
            }
        }
    }

    /// `printf FORMAT ARGS…`: the format's text with each conversion bound to the next argument.
    fn push_printf(&mut self, format: &Word, args: Vec<Word>) {
        let mut args = args.into_iter();
        for part in &format.parts {
            let Part::Lit { text, span } = part else {
                self.push_hole(Hole::Part(part.clone()));
                continue;
            };
            let mut chars = text.char_indices().peekable();
            let mut lit_start = 0;
            while let Some((i, c)) = chars.next() {
                if c != '%' {
                    continue;
                }
                let sub_span = |a: usize, b: usize| span.map(|(s, _)| (s + a, s + b));
                self.push_lit(&text[lit_start..i], sub_span(lit_start, i));
                let mut spec = String::from("%");
                while let Some(&(_, n)) = chars.peek() {
                    spec.push(n);
                    chars.next();
                    if n.is_ascii_alphabetic() || n == '%' {
                        break;
                    }
                }
                lit_start = chars.peek().map_or(text.len(), |(j, _)| *j);
                if spec == "%%" {
                    self.push_lit("%", None);
                } else {
                    self.push_hole(Hole::Printf { arg: args.next(), spec });
                }
            }
            self.push_lit(&text[lit_start..], span.map(|(s, e)| (s + lit_start, e)));
        }
    }

    /// The hole a placeholder character stands for.
    fn hole(&self, c: char) -> Option<&Hole> {
        (c as u32).checked_sub(HOLE_BASE).and_then(|i| self.holes.get(i as usize))
    }

    /// The file span of `text[start..end]` when it lies inside one verbatim literal.
    fn span(&self, start: usize, end: usize) -> Option<Span> {
        self.origins
            .iter()
            .find(|(s, e, _)| *s <= start && end <= *e)
            .map(|(s, _, file)| (file + (start - s), file + (end - s)))
    }

    /// The value that starts at byte `at` of the text and runs to the first delimiter.
    fn value_at(&self, at: usize, stops: &[char]) -> Option<Value> {
        let rest = &self.text[at..];
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        if let Some(hole) = self.hole(first) {
            return Some(Value::Hole(hole.clone()));
        }
        let end = rest.find(|c: char| stops.contains(&c) || self.hole(c).is_some()).unwrap_or(rest.len());
        let text = rest[..end].trim_end();
        (!text.is_empty()).then(|| Value::Lit { text: text.to_string(), span: self.span(at, at + text.len()) })
    }

    /// Every value of `"key": value` (JSON, quotes around the key optional) in the text.
    pub(crate) fn json(&self, key: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut from = 0;
        // memmem, not `str::find`: this runs for every key on every word of a script, mostly short
        // words, where building std's two-way searcher per call cost more than the search.
        while let Some(pos) = memchr::memmem::find(&self.text.as_bytes()[from..], key.as_bytes()) {
            let at = from + pos;
            from = at + key.len();
            if self.text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            let after = &self.text[from..];
            let after_key = after.trim_start_matches(['"', '\'']);
            let Some(rest) = after_key.trim_start().strip_prefix(':') else { continue };
            let skipped = rest.len() - rest.trim_start().trim_start_matches(['"', '\'']).len();
            let value_at = self.text.len() - rest.len() + skipped;
            if let Some(v) = self.value_at(value_at, &[',', '}', '"', '\'', ' ', ']', '\n']) {
                out.push(v);
            }
        }
        out
    }

    /// Every list value of `"key": [a, b, c]` in the text: the text between the brackets (its span is what
    /// `pins fix` rewrites), or the expansion that stands for the whole list (`[$RATES]`, `$RATES`). A list
    /// that mixes literals and expansions is returned as written, for the reader to call not understood.
    pub(crate) fn json_list(&self, key: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(pos) = self.text[from..].find(key) {
            let at = from + pos;
            from = at + key.len();
            if self.text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            let after_key = self.text[from..].trim_start_matches(['"', '\'', '\\']);
            let Some(rest) = after_key.trim_start().strip_prefix(':') else { continue };
            let rest = rest.trim_start();
            let Some(inner) = rest.strip_prefix('[') else {
                out.extend(self.value_at(self.text.len() - rest.len(), &[',', '}', '"', '\'', ' ', '\n']));
                continue;
            };
            let Some(end) = inner.find(']') else { continue };
            let start = self.text.len() - inner.len();
            let body = inner[..end].trim();
            let lead = inner[..end].len() - inner[..end].trim_start().len();
            let mut chars = body.chars();
            match (chars.next().and_then(|c| self.hole(c)), chars.next()) {
                (Some(hole), None) => out.push(Value::Hole(hole.clone())),
                _ if !body.is_empty() => out.push(Value::Lit {
                    text: body.to_string(),
                    span: self.span(start + lead, start + lead + body.len()),
                }),
                _ => {}
            }
        }
        out
    }

    /// The value of a `key: value` line (YAML written by a heredoc).
    pub(crate) fn yaml(&self, key: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut line_start = 0;
        for line in self.text.split_inclusive('\n') {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            if let Some(rest) = trimmed.strip_prefix(key)
                && let Some(value) = rest.strip_prefix(':')
            {
                let value_trim = value.trim_start().trim_start_matches(['"', '\'']);
                let at = line_start + indent + key.len() + 1 + (value.len() - value_trim.len());
                if let Some(v) = self.value_at(at, &['"', '\'', '\n', ' ', '#']) {
                    out.push(v);
                }
            }
            line_start += line.len();
        }
        out
    }

    /// `NAME=value` pairs written inside the text (an env string spliced into a command).
    pub(crate) fn assignments(&self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        let mut offset = 0;
        for token in self.text.split_inclusive(char::is_whitespace) {
            let trimmed = token.trim_end();
            if let Some((name, _)) = trimmed.split_once('=')
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && let Some(v) = self.value_at(offset + name.len() + 1, &[' ', '\n', '\t', '"', '\''])
            {
                out.push((name.to_string(), v));
            }
            offset += token.len();
        }
        out
    }

    /// The text split on whitespace, each token as its own template (flags inside a string).
    pub(crate) fn tokens(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut offset = 0;
        for token in self.text.split_inclusive(char::is_whitespace) {
            if !token.trim().is_empty()
                && let Some(v) = self.value_at(offset, &[' ', '\n', '\t'])
            {
                out.push(v);
            }
            offset += token.len();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_printf(_: &str, _: usize) -> Option<(Word, Vec<Word>)> {
        None
    }

    #[test]
    fn character_positions_map_to_bytes_in_any_text() {
        for text in ["echo plain", "# café — ünïcode\nK=2.49 # ≈", "é", ""] {
            let source = Source::new(text, 40);
            let expected: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
            for (i, b) in expected.iter().enumerate() {
                assert_eq!(source.byte(i), 40 + b, "{text:?} at {i}");
            }
            // Past the last character: the end of the text.
            let after = source.byte(expected.len());
            assert_eq!(after, 40 + text.len(), "{text:?}");
        }
    }

    #[test]
    fn literals_keep_their_file_spans_through_quotes_and_escapes() {
        let raw = r#""{\"k\": $N, \"synthetic_acceptance_length\": 2.49}""#;
        let word = convert(raw, 100, 7);
        let t = Template::of(&word, &no_printf);
        let values = t.json("synthetic_acceptance_length");
        let [Value::Lit { text, span: Some((a, b)) }] = values.as_slice() else { panic!("{values:?}") };
        assert_eq!(text, "2.49");
        assert_eq!(&raw[a - 100..b - 100], "2.49");
        let k = t.json("k");
        assert!(matches!(k.as_slice(), [Value::Hole(Hole::Part(Part::Var { name, .. }))] if name == "N"), "{k:?}");
    }

    /// A word [`simple_pieces`] reads comes out as brush reads it; any other word is left to brush.
    fn same_as_brush(raw: &str) -> bool {
        let Some(fast) = simple_pieces(raw) else { return false };
        let slow = brush_pieces(raw);
        assert!(slow.is_some(), "brush cannot parse {raw:?}, the fast path can");
        assert_eq!(from_pieces(raw, 10, 2, false, Some(fast)), from_pieces(raw, 10, 2, false, slow), "{raw:?}");
        true
    }

    #[test]
    fn simple_words_are_read_as_brush_reads_them() {
        let read = [
            "\"$MODEL\"",
            "--model=${MODEL}",
            "${NUM_SPEC_TOKENS:-3}",
            "\"${K:=2}\"/x",
            "${K-}",
            "${K=a b}",
            "'it''s'\"$A$B\"c",
            "$1$2x",
            "\"$0\" $! $? $$ $# $@ $* $-",
            "\"${ARGS[@]}\"${A[*]}",
            "\"\"",
            "''",
            "a\"b\"c'd'",
            "\"{ \\\"k\\\": 1 }\"",
            "a\\ b\\\"\"\\n\\$x\"",
        ];
        for raw in read {
            assert!(same_as_brush(raw), "not read by the fast path: {raw:?}");
        }
        let left = [
            "~/x",
            "\"$(date)\"",
            "$((1+2))",
            "${#A}",
            "${A%%x}",
            "${A[1]}",
            "${@}",
            "$'a'",
            "'open",
            "a\\",
            "${A:-$B}",
            "$",
        ];
        for raw in left {
            assert!(!same_as_brush(raw), "read by the fast path: {raw:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_agrees_with_brush(raw in "[a$_{}:=\\-'\"10 ~`\\\\()#%@!é*?\\[\\]]{1,14}") {
            same_as_brush(&raw);
        }

        // Words built from the pieces the fast path reads — quotes, escapes, `$x`, and the `${…}` forms
        // that random characters almost never spell — so its `${` branch is compared with brush too.
        #[test]
        fn built_words_read_as_brush_reads_them(raw in BUILT_WORD) {
            same_as_brush(&raw);
        }
    }

    /// Words made of the pieces the fast path reads (see `built_words_read_as_brush_reads_them`).
    const BUILT_WORD: &str = "([a é(){}#%@!*?]|'[a$\"]*'|\"([a $]|\\\\[$\"])*\"|\\$[a_1?@#]|\\$\\{a(\\[[@*]\\])?(:?[-=][a (){}]{0,3})?\\}|\\\\.){1,6}";

    #[test]
    fn built_words_mostly_take_the_fast_path() {
        // Otherwise the property test above would compare nothing.
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = proptest::string::string_regex(BUILT_WORD).unwrap();
        let words: Vec<String> = (0..300).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect();
        let fast = words.iter().filter(|w| same_as_brush(w)).count();
        let braces = words.iter().filter(|w| w.contains("${") && same_as_brush(w)).count();
        assert!(
            fast * 2 > words.len() && braces >= 30,
            "{fast} of {} read by the fast path, {braces} with ${{",
            words.len()
        );
    }

    #[test]
    fn defaults_and_strips() {
        let word = convert("${NUM:-3}", 0, 1);
        let [Part::Var { name, op: VarOp::Default(default) }] = word.parts.as_slice() else { panic!() };
        assert_eq!(name, "NUM");
        assert_eq!(default.literal().as_deref(), Some("3"));
        assert_eq!(default.literal_span(), Some((7, 8)));
        let word = convert("${EXP_NAME%%_*}_x", 0, 1);
        assert!(matches!(&word.parts[0], Part::Var { op: VarOp::Strip { suffix: true, largest: true, .. }, .. }));
        assert!(glob("*DeepSeek-V4*:3", "DeepSeek-V4-Pro:3"));
        assert!(!glob("*DeepSeek-V4*:3", "DeepSeek-V4-Pro:2"));
    }

    #[test]
    fn assignments_and_yaml_inside_text() {
        let word = convert("\"SGLANG_SIMULATE_ACC_LEN=${AL} SGLANG_SIMULATE_ACC_METHOD=match-expected\"", 0, 1);
        let t = Template::of(&word, &no_printf);
        let pairs = t.assignments();
        assert_eq!(pairs.len(), 2);
        assert!(matches!(&pairs[0].1, Value::Hole(_)));
        let doc = convert_heredoc("speculative_config:\n    max_draft_len: 3\n    model: $D\n", 0, 1, true);
        let t = Template::of(&doc, &no_printf);
        assert!(matches!(t.yaml("max_draft_len").as_slice(), [Value::Lit { text, .. }] if text == "3"));
        assert!(matches!(t.yaml("model").as_slice(), [Value::Hole(_)]));
    }
}
