//! What a script writes into a file: the lines `echo`, `printf` and `cat <<EOF` send to a file their
//! standard output goes to, read as far as their text is written. A `for` loop's variable takes each of
//! its words, so `for v in A B; do printf '%s=%s\n' "$v" "${!v}"; done > F` writes lines starting `A=`
//! and `B=`; a variable or command the line does not spell ends what is known of it.

use std::collections::HashMap;

use super::{Part, Script, StmtKind, VarOp, Word};

/// A line a command writes, as far as the script spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenLine {
    /// Its text up to the first part the script does not spell.
    pub known: String,
    /// Whether that is the whole line.
    pub whole: bool,
}

/// Where the known text of a line stops: a part whose text the script does not spell.
const UNKNOWN: char = '\0';

impl Script {
    /// The statements whose standard output goes to `file` (`$F`, `"${F}"` and `$F` are one file).
    pub(crate) fn writers_of(&self, file: &Word) -> Vec<usize> {
        let key = file_key(file);
        self.stmts
            .iter()
            .enumerate()
            .filter(|(_, s)| match &s.kind {
                StmtKind::Command(c) => c.stdout.as_ref().is_some_and(|o| file_key(&o.target) == key),
                StmtKind::Assign(_) => false,
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Each line statement `i` writes, each `for` word its loop variable takes giving its own lines (none
    /// for a builtin that prints nothing); `None` for a command other than `echo`, `printf` or `cat` with a
    /// heredoc, whose output is not read.
    pub(crate) fn written_lines(&self, i: usize) -> Option<Vec<WrittenLine>> {
        let StmtKind::Command(c) = &self.stmts.get(i)?.kind else { return None };
        let (name, args) = c.words.split_first()?;
        if name.literal().is_some_and(|n| prints_nothing(&n, args)) {
            return Some(Vec::new());
        }
        let mut lines = Vec::new();
        for bind in self.loop_bindings(i, &c.words) {
            let text = |w: &Word| spelled(w, &bind);
            let out = match name.literal().as_deref() {
                Some("echo") => {
                    let words: Vec<String> =
                        args.iter().skip_while(|w| w.literal().is_some_and(|l| is_echo_flag(&l))).map(text).collect();
                    words.join(" ") + "\n"
                }
                Some("printf") => {
                    let rest: Vec<&Word> = args.iter().skip_while(|w| w.literal().as_deref() == Some("--")).collect();
                    let (format, values) = rest.split_first()?;
                    printf(&text(format), &values.iter().map(|w| text(w)).collect::<Vec<_>>())
                }
                Some("cat") if !c.heredocs.is_empty() => c.heredocs.iter().map(text).collect(),
                _ => return None,
            };
            let body = out.strip_suffix('\n').unwrap_or(&out);
            lines.extend(body.split('\n').map(|l| match l.split_once(UNKNOWN) {
                Some((known, _)) => WrittenLine { known: known.to_string(), whole: false },
                None => WrittenLine { known: l.to_string(), whole: true },
            }));
        }
        Some(lines)
    }

    /// Each assignment of the `for` variables around statement `i` that `words` read: one map per
    /// combination of their words (a single empty map outside any loop).
    fn loop_bindings(&self, i: usize, words: &[Word]) -> Vec<HashMap<String, String>> {
        let mut binds = vec![HashMap::new()];
        for l in self.loops.iter().filter(|l| l.body.contains(&i) && words.iter().any(|w| w.reads(&l.var))) {
            binds = binds
                .into_iter()
                .flat_map(|b| {
                    l.items.iter().map(move |item| {
                        let mut b = b.clone();
                        b.insert(l.var.clone(), item.literal().unwrap_or_else(|| UNKNOWN.to_string()));
                        b
                    })
                })
                .collect();
        }
        binds
    }
}

/// Builtins that print nothing on standard output (`exit 1` in a group redirected to a file); the
/// declaring ones only when they declare something (`export` alone lists every exported name).
fn prints_nothing(name: &str, args: &[Word]) -> bool {
    let declares = !args.is_empty() && !args.iter().any(|w| w.literal().as_deref() == Some("-p"));
    match name {
        "exit" | "return" | "break" | "continue" | "true" | "false" | ":" | "shift" | "unset" | "cd" => true,
        "export" | "local" | "readonly" | "declare" | "set" => declares,
        _ => false,
    }
}

fn is_echo_flag(word: &str) -> bool {
    word.len() > 1 && word.starts_with('-') && word[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
}

/// The text of `word` as written, a bound loop variable as its word, anything else [`UNKNOWN`].
fn spelled(word: &Word, bind: &HashMap<String, String>) -> String {
    word.parts
        .iter()
        .map(|p| match p {
            Part::Lit { text, .. } => text.clone(),
            Part::Var { name, op: VarOp::Plain } => bind.get(name).cloned().unwrap_or_else(|| UNKNOWN.to_string()),
            _ => UNKNOWN.to_string(),
        })
        .collect()
}

/// What `printf FORMAT VALUES…` prints: each conversion takes the next value, the format repeats
/// while values remain, and `\n`, `\t`, `\\` and `%%` are written as what they stand for.
fn printf(format: &str, values: &[String]) -> String {
    let mut out = String::new();
    let mut next = values.iter();
    let mut taken = 0;
    loop {
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek().copied()) {
                ('\\', Some(e)) => {
                    chars.next();
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                ('%', Some('%')) => {
                    chars.next();
                    out.push('%');
                }
                ('%', Some(_)) => {
                    // Flags, width and precision up to the conversion letter.
                    for f in chars.by_ref() {
                        if f.is_ascii_alphabetic() {
                            break;
                        }
                    }
                    taken += 1;
                    out.push_str(next.next().map_or("", String::as_str));
                }
                _ => out.push(c),
            }
        }
        if taken == 0 || taken >= values.len() {
            return out;
        }
    }
}

/// One spelling per file: its literal text with each plain variable as `${NAME}`.
fn file_key(word: &Word) -> String {
    word.parts
        .iter()
        .map(|p| match p {
            Part::Lit { text, .. } => text.clone(),
            Part::Var { name, op: VarOp::Plain } => format!("${{{name}}}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::bash::Script;

    /// The known text of each line each writer of `file` writes (`None`: a writer not read).
    fn lines(text: &str, file: &str) -> Vec<Option<Vec<String>>> {
        let script = Script::parse("x.sh", text).unwrap();
        let target = crate::bash::word::convert(file, 0, 1);
        let known = |ls: Vec<super::WrittenLine>| ls.into_iter().map(|l| l.known).collect();
        script.writers_of(&target).into_iter().map(|i| script.written_lines(i).map(known)).collect()
    }

    #[test]
    fn a_group_redirected_to_a_file_writes_each_loop_word_and_echo_line() {
        let text = "F=/tmp/x.env\n{\n  for v in A B; do\n    if [[ -n \"${!v+x}\" ]]; then printf '%s=%s\\n' \"$v\" \"${!v}\" || exit 1; fi\n  done\n  echo \"HF_HOME=/h\"\n  echo note >&2\n} > \"$F\"\necho C=1 >> \"${F}\"\necho D=1 > other.env\n";
        let got = lines(text, "\"$F\"");
        let want = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(got, [want(&["A=", "B="]), want(&[]), want(&["HF_HOME=/h"]), want(&["C=1"])]);
    }

    #[test]
    fn a_group_empties_its_file_once_before_its_first_command() {
        // The assignment that opens the group writes nothing, so the first echo is still the one that empties.
        let text = "{\n  D=$(date)\n  echo A=1\n  echo B=1\n} > f.env\necho C=1 >> f.env\necho D=1 > f.env\n";
        let script = Script::parse("x.sh", text).unwrap();
        let target = crate::bash::word::convert("f.env", 0, 1);
        let empties: Vec<bool> = script
            .writers_of(&target)
            .into_iter()
            .map(|i| match &script.stmts[i].kind {
                crate::bash::StmtKind::Command(c) => c.stdout.as_ref().is_some_and(|o| o.empties.is_some()),
                crate::bash::StmtKind::Assign(_) => panic!("an assignment writes no file"),
            })
            .collect();
        assert_eq!(empties, [true, false, false, true]);
    }

    #[test]
    fn a_heredoc_writes_its_lines_and_another_command_is_unread() {
        let text = "cat > f.env <<EOF\nX=1\nY=$Z\nEOF\nenv > f.env\n";
        let got = lines(text, "f.env");
        assert_eq!(got, [Some(vec!["X=1".to_string(), "Y=".to_string()]), None]);
    }
}
