//! Bash's text operations, as the scripts use them: case patterns bound to the variables of their
//! subject, `${X%pat}` strips, `printf` conversions, awk's `%.6g` and shell arithmetic.

use super::Part;
use super::Word;
use super::word::glob;

/// The part of a case pattern that lines up with `name` in the subject (`$A:$B` with `x*:3` → `3` for B).
pub(crate) fn bind_pattern(subject: &Word, pattern: &str, name: &str) -> Option<String> {
    match subject.parts.as_slice() {
        [Part::Var { name: n, .. }] if n == name => Some(pattern.to_string()),
        parts => {
            let mut rest = pattern;
            for (i, part) in parts.iter().enumerate() {
                match part {
                    Part::Var { name: n, .. } => {
                        let piece = match parts.get(i + 1) {
                            Some(Part::Lit { text, .. }) => {
                                let at = rest.find(text.as_str())?;
                                let piece = &rest[..at];
                                rest = &rest[at..];
                                piece
                            }
                            None => std::mem::take(&mut rest),
                            Some(_) => return None,
                        };
                        if n == name {
                            return Some(piece.to_string());
                        }
                    }
                    Part::Lit { text, .. } => rest = rest.strip_prefix(text.as_str())?,
                    _ => return None,
                }
            }
            None
        }
    }
}

/// `${X%pat}` and friends.
pub(crate) fn strip(text: &str, pattern: &str, suffix: bool, largest: bool) -> String {
    let n = text.len();
    let cuts: Vec<usize> = (0..=n).filter(|i| text.is_char_boundary(*i)).collect();
    if suffix {
        let order: Vec<&usize> = if largest { cuts.iter().collect() } else { cuts.iter().rev().collect() };
        for &i in order {
            if glob(pattern, &text[i..]) {
                return text[..i].to_string();
            }
        }
    } else {
        let order: Vec<&usize> = if largest { cuts.iter().rev().collect() } else { cuts.iter().collect() };
        for &i in order {
            if glob(pattern, &text[..i]) {
                return text[i..].to_string();
            }
        }
    }
    text.to_string()
}

/// `printf` conversions the pins use: `%s`, `%q`, `%d`, `%i`, `%f`, `%.Nf`, `%g`.
pub(crate) fn printf_format(text: &str, spec: &str) -> Option<String> {
    let conversion = spec.chars().last()?;
    let body = &spec[1..spec.len() - 1];
    match conversion {
        's' | 'q' => Some(text.to_string()),
        'd' | 'i' => text.trim().parse::<i64>().ok().map(|v| v.to_string()),
        'f' | 'F' => {
            let v: f64 = text.trim().parse().ok()?;
            let precision = body.rsplit_once('.').map_or(Some(6), |(_, p)| p.parse::<usize>().ok())?;
            Some(format!("{v:.precision$}"))
        }
        'g' => text.trim().parse::<f64>().ok().map(format_g6),
        _ => None,
    }
}

/// awk's default number output (`%.6g`).
pub(crate) fn format_g6(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = 6 - 1 - v.abs().log10().floor() as i32;
    crate::units::plain_number(v, digits.clamp(0, 12) as usize)
}

/// + − × ÷ and parentheses over decimal numbers.
pub(crate) fn arithmetic(text: &str) -> Option<f64> {
    fn expr(t: &[char], i: &mut usize) -> Option<f64> {
        let mut v = term(t, i)?;
        loop {
            skip(t, i);
            match t.get(*i) {
                Some('+') => {
                    *i += 1;
                    v += term(t, i)?;
                }
                Some('-') => {
                    *i += 1;
                    v -= term(t, i)?;
                }
                _ => return Some(v),
            }
        }
    }
    fn term(t: &[char], i: &mut usize) -> Option<f64> {
        let mut v = atom(t, i)?;
        loop {
            skip(t, i);
            match t.get(*i) {
                Some('*') => {
                    *i += 1;
                    v *= atom(t, i)?;
                }
                Some('/') => {
                    *i += 1;
                    let d = atom(t, i)?;
                    if d == 0.0 {
                        return None;
                    }
                    v /= d;
                }
                _ => return Some(v),
            }
        }
    }
    fn atom(t: &[char], i: &mut usize) -> Option<f64> {
        skip(t, i);
        match t.get(*i)? {
            '(' => {
                *i += 1;
                let v = expr(t, i)?;
                skip(t, i);
                (t.get(*i) == Some(&')')).then(|| *i += 1)?;
                Some(v)
            }
            '-' => {
                *i += 1;
                Some(-atom(t, i)?)
            }
            _ => {
                let start = *i;
                while *i < t.len() && (t[*i].is_ascii_digit() || t[*i] == '.') {
                    *i += 1;
                }
                t[start..*i].iter().collect::<String>().parse().ok()
            }
        }
    }
    fn skip(t: &[char], i: &mut usize) {
        while *i < t.len() && t[*i].is_whitespace() {
            *i += 1;
        }
    }
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let v = expr(&chars, &mut i)?;
    skip(&chars, &mut i);
    (i == chars.len() && v.is_finite()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_formats() {
        assert_eq!(printf_format("2.78", "%.2f").as_deref(), Some("2.78"));
        assert_eq!(printf_format("2.785", "%.1f").as_deref(), Some("2.8"));
        assert_eq!(printf_format("3", "%d").as_deref(), Some("3"));
        assert_eq!(printf_format("x", "%d"), None);
    }
}
