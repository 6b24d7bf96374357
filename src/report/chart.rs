//! What every SVG chart shares: a title that wraps onto as many lines as it needs instead of running off
//! the canvas, the colour-blind-safe palette, labels thinned so that they never overlap, and the PNG a
//! `--plot x.png` asks for, rasterised from the SVG.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};

/// Roughly how wide a sans-serif character is, as a share of the font size (wide enough for digits and
/// capitals, so a wrapped line never runs off the canvas).
const CHAR_WIDTH: f64 = 0.56;

/// The system's fonts, with the first of the usual sans-serif families found standing for `sans-serif`
/// (the family the charts name), else any family there is.
///
/// # Errors
/// [`Error::Parameter`] `plot` where the system has no font to draw text with.
fn fonts() -> Result<resvg::usvg::fontdb::Database> {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_system_fonts();
    let families: Vec<String> = db.faces().flat_map(|f| f.families.iter().map(|(name, _)| name.clone())).collect();
    let usual = ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica", "Noto Sans"];
    let family = usual.iter().map(|u| u.to_string()).find(|u| families.contains(u)).or(families.first().cloned());
    match family {
        Some(family) => {
            db.set_sans_serif_family(family);
            Ok(db)
        }
        None => Err(Error::parameter("plot", "the system has no font to draw a PNG's text with: write SVG (FILE.svg)")),
    }
}

/// Refuses a PNG before any work where it could not be drawn (no system font).
///
/// # Errors
/// As [`png`].
pub fn png_ready() -> Result<()> {
    fonts().map(|_| ())
}

/// The chart `svg` as PNG bytes, at the SVG's size.
///
/// # Errors
/// [`Error::Parameter`] `plot` where the system has no font, or the SVG cannot be read back.
pub fn png(svg: &str) -> Result<Vec<u8>> {
    let mut options = resvg::usvg::Options::default();
    *options.fontdb_mut() = fonts()?;
    let failed = |e: &dyn std::fmt::Display| Error::parameter("plot", format!("rasterising the chart failed: {e}"));
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(|e| failed(&e))?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| failed(&"the chart has no area"))?;
    resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| failed(&e))
}

/// Okabe and Ito's eight colours, distinguishable under every common colour-vision deficiency (Okabe & Ito,
/// "Color Universal Design", 2008), black last.
const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(240, 228, 66),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(0, 0, 0),
];

/// The colour of series `i` (1-based: k = 1..8 each its own), grey for 0 (k = 0, speculative decoding off);
/// past eight the colours repeat.
pub(crate) fn colour(i: usize) -> RGBColor {
    match i {
        0 => RGBColor(120, 120, 120),
        _ => OKABE_ITO[(i - 1) % OKABE_ITO.len()],
    }
}

/// Most point labels a panel carries: more would overlap (`--concurrency 1-64` has 64 points per curve).
const MAX_LABELS: usize = 8;

/// The concurrencies (sorted, distinct) whose points keep their labels: all of at most [`MAX_LABELS`], else
/// the powers of two among them (a doubling sweep's points lie apart), else every n-th.
pub(crate) fn labelled(concurrencies: &[usize]) -> Vec<usize> {
    if concurrencies.len() <= MAX_LABELS {
        return concurrencies.to_vec();
    }
    let doubling: Vec<usize> = concurrencies.iter().copied().filter(|c| c.is_power_of_two()).collect();
    if (2..=MAX_LABELS).contains(&doubling.len()) {
        return doubling;
    }
    let every = concurrencies.len().div_ceil(MAX_LABELS);
    concurrencies.iter().copied().step_by(every).collect()
}

/// Draws `title` centred at the top of `area`, wrapped to its width, and returns the area below it.
pub(crate) fn titled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    size: u32,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (width, _) = area.dim_in_pixel();
    let per_line = ((f64::from(width) - 24.0) / (f64::from(size) * CHAR_WIDTH)).max(20.0) as usize;
    let lines = textwrap::wrap(title, textwrap::Options::new(per_line).break_words(true));
    let line_height = size + size / 3;
    let style = ("sans-serif", size).into_font().into_text_style(area).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.to_string(),
            (width as i32 / 2, 8 + (i as u32 * line_height) as i32),
            style.clone(),
        ))?;
    }
    let used = 8 + lines.len() as u32 * line_height + 4;
    Ok(area.split_vertically(used).1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_thinned_to_a_few_apart() {
        assert_eq!(labelled(&[4, 16]), [4, 16]);
        let one_to_64: Vec<usize> = (1..=64).collect();
        assert_eq!(labelled(&one_to_64), [1, 2, 4, 8, 16, 32, 64]);
        let odd: Vec<usize> = (0..40).map(|i| 3 + 2 * i).collect();
        assert_eq!(labelled(&odd).len(), 8);
        let colours: Vec<RGBColor> = (1..=8).map(colour).collect();
        assert!((0..8).all(|i| (i + 1..8).all(|j| colours[i] != colours[j])), "k = 1..8 each its own colour");
        assert!((1..=8).all(|k| colour(k) != colour(0)));
    }
}
