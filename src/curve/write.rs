//! Writing golden files in InferenceX's layout, so that what alsim writes reads back through
//! [`CurveFile::parse`](super::CurveFile::parse) with the same header facts and the same curves.
//!
//! A file is its header comment (one `# ` line each) followed by the curves: a thinking-matrix block
//! (`model: {thinking_on: {k: AL}}`) for curves with a mode, a plain map (`model: {k: AL}`) for curves
//! without one. A point may carry a trailing `# …` comment, which readers (InferenceX's and alsim's)
//! skip: that is where figures beside the mean — steps, standard errors, intervals — go without changing
//! the schema.

use std::fmt::Write as _;

use super::{Curve, ThinkingMode};
use crate::error::{Error, Result};

/// Decimals written per AL: one more than InferenceX's two, so a value's rounding stays well inside the
/// interval beside it.
pub(crate) const AL_DECIMALS: usize = 3;

/// The file text for `header` lines (without `#`) and `curves`; `comment(curve, k)` gives a point's
/// trailing comment, if any.
///
/// # Errors
/// [`Error::Invalid`] naming the field when a model key is not a plain YAML key (letters, digits and
/// `.` `_` `-` `/` `+`), one model has curves both with and without a mode or the same mode twice, or a
/// header line or comment holds a line break or control character (it would end the comment).
pub(crate) fn render(
    header: &[String],
    curves: &[&Curve],
    comment: impl Fn(&Curve, usize) -> Option<String>,
) -> Result<String> {
    let mut out = String::new();
    for line in header {
        single_line(line, "header")?;
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
    let mut models: Vec<&str> = Vec::new();
    for curve in curves {
        if !models.contains(&curve.model()) {
            models.push(curve.model());
        }
    }
    for model in models {
        plain_key(model)?;
        let of_model: Vec<&Curve> = curves.iter().copied().filter(|c| c.model() == model).collect();
        let _ = writeln!(out, "{model}:");
        let unspecified = of_model.iter().any(|c| c.mode() == ThinkingMode::Unspecified);
        if unspecified && of_model.len() > 1 {
            return Err(Error::invalid(
                model,
                "a model's curves must all have a thinking mode, or be one curve without one",
            ));
        }
        for (i, curve) in of_model.iter().enumerate() {
            if of_model[..i].iter().any(|c| c.mode() == curve.mode()) {
                return Err(Error::invalid(curve.name(), "the same thinking mode appears twice"));
            }
            let indent = if unspecified {
                "  "
            } else {
                let _ = writeln!(out, "  {}:", curve.mode().name());
                "    "
            };
            for (&k, &al) in curve.points() {
                let _ = write!(out, "{indent}{k}: {al:.AL_DECIMALS$}");
                if let Some(text) = comment(curve, k) {
                    single_line(&text, &curve.field(k))?;
                    let _ = write!(out, "  # {text}");
                }
                out.push('\n');
            }
        }
    }
    Ok(out)
}

fn single_line(text: &str, field: &str) -> Result<()> {
    if text.contains(|c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')) {
        return Err(Error::invalid(field, format!("{:?} holds a line break or control character", text)));
    }
    Ok(())
}

fn plain_key(model: &str) -> Result<()> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+');
    if model.is_empty() || !model.chars().all(plain) || !model.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(Error::parameter(
            "model",
            format!(
                "{:?} is not a plain model key: use letters, digits and . _ - / + (starting with a letter or digit)",
                model
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::curve::{CurveFile, Shape};

    fn curve(model: &str, mode: ThinkingMode, points: &[(usize, f64)]) -> Curve {
        Curve::new(model, mode, points.iter().copied().collect::<BTreeMap<_, _>>()).unwrap()
    }

    #[test]
    fn what_is_written_reads_back() {
        let on = curve("minimax-m3", ThinkingMode::On, &[(1, 1.781), (2, 2.384), (3, 2.8304)]);
        let off = curve("minimax-m3", ThinkingMode::Off, &[(1, 1.9), (2, 2.6)]);
        let header = vec!["drafter: Inferact/MiniMax-M3-EAGLE3".to_string(), String::new(), "method: eagle3".into()];
        let text = render(&header, &[&on, &off], |_, k| (k == 2).then(|| "steps=100 se=0.01".into())).unwrap();
        assert!(text.contains("    2: 2.384  # steps=100 se=0.01\n"), "{text}");
        let file = CurveFile::parse(&text, "w", "w").unwrap();
        assert_eq!(file.shape, Shape::ThinkingMatrix);
        assert_eq!(file.provenance.drafter.as_deref(), Some("Inferact/MiniMax-M3-EAGLE3"));
        assert_eq!(file.provenance.method.as_deref(), Some("eagle3"));
        assert_eq!(file.header, ["drafter: Inferact/MiniMax-M3-EAGLE3", "", "method: eagle3"]);
        assert_eq!(file.curves[0].points()[&3], 2.830);
        assert_eq!(file.curves[1], off);

        let plain = curve("m", ThinkingMode::Unspecified, &[(1, 1.5)]);
        let file = CurveFile::parse(&render(&[], &[&plain], |_, _| None).unwrap(), "p", "p").unwrap();
        assert_eq!((file.shape, &file.curves[0]), (Shape::PlainMap, &plain));
    }

    #[test]
    fn what_would_not_read_back_is_refused() {
        let bad_key = curve("a: b", ThinkingMode::On, &[(1, 1.5)]);
        assert!(render(&[], &[&bad_key], |_, _| None).unwrap_err().to_string().starts_with("model: "));
        let ok = curve("m", ThinkingMode::On, &[(1, 1.5)]);
        assert!(render(&["a\nm: 1".into()], &[&ok], |_, _| None).is_err());
        assert!(render(&[], &[&ok], |_, _| Some("x\ny".into())).unwrap_err().to_string().contains("m.thinking_on.1"));
        let plain = curve("m", ThinkingMode::Unspecified, &[(1, 1.5)]);
        assert!(render(&[], &[&ok, &plain], |_, _| None).is_err());
    }
}
