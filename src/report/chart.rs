//! What every SVG chart shares: a title that wraps onto as many lines as it needs instead of running off
//! the canvas.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Roughly how wide a sans-serif character is, as a share of the font size (wide enough for digits and
/// capitals, so a wrapped line never runs off the canvas).
const CHAR_WIDTH: f64 = 0.56;

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
