//! Counts over one window of a run, and the bounded time series of windows that batch means read.

use serde::Serialize;

/// Counts over one window of a run (a log interval, the gap between two scrapes, one iteration, or the
/// whole run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Verification steps D (request-steps that carried drafts; vLLM "drafts", ATOM decode steps).
    pub steps: f64,
    /// Accepted draft tokens A, excluding the target's own token (so AL = 1 + A/D).
    pub accepted: f64,
    /// Accepted drafts at positions 1..k (P_i; estimates p_i = P_i/D), where the engine counts them.
    pub positions: Option<Vec<f64>>,
    /// Steps that accepted exactly a = 0..k drafts (ATOM), where the engine counts them.
    pub distribution: Option<Vec<f64>>,
    /// Draft tokens proposed (k per step for a chain drafter), where the engine counts them apart from
    /// the steps: it must agree with D·k (`super::validate`).
    pub draft_tokens: Option<f64>,
}

impl Window {
    /// A window with only step and acceptance counts.
    pub fn new(steps: f64, accepted: f64) -> Window {
        Window { steps, accepted, positions: None, distribution: None, draft_tokens: None }
    }

    /// A window from per-count step totals n_a (a = 0..k): D = Σ n_a, A = Σ a·n_a, P_i = Σ_{a≥i} n_a.
    pub fn from_distribution(counts: Vec<f64>) -> Window {
        let steps = counts.iter().sum();
        let accepted = counts.iter().enumerate().map(|(a, n)| a as f64 * n).sum();
        let mut tail = 0.0;
        let mut positions = vec![0.0; counts.len().saturating_sub(1)];
        for i in (1..counts.len()).rev() {
            tail += counts[i];
            positions[i - 1] = tail;
        }
        Window { steps, accepted, positions: Some(positions), distribution: Some(counts), draft_tokens: None }
    }

    /// The element-wise sum of two windows; per-position, distribution and draft-token counts survive
    /// only when both windows have them (with the same k).
    pub fn add(&self, other: &Window) -> Window {
        let join = |a: &Option<Vec<f64>>, b: &Option<Vec<f64>>| match (a, b) {
            (Some(a), Some(b)) if a.len() == b.len() => Some(a.iter().zip(b).map(|(x, y)| x + y).collect()),
            _ => None,
        };
        Window {
            steps: self.steps + other.steps,
            accepted: self.accepted + other.accepted,
            positions: join(&self.positions, &other.positions),
            distribution: join(&self.distribution, &other.distribution),
            draft_tokens: self.draft_tokens.zip(other.draft_tokens).map(|(a, b)| a + b),
        }
    }

    /// The sum of `windows` (`None` when there are none).
    pub fn sum<'a>(windows: impl IntoIterator<Item = &'a Window>) -> Option<Window> {
        let mut windows = windows.into_iter();
        let first = windows.next()?.clone();
        Some(windows.fold(first, |acc, w| acc.add(w)))
    }
}

/// The most windows a [`Series`] keeps. A day of 1-second scrapes is 86,400 windows; past the cap,
/// neighbours are merged, which keeps every count and only coarsens the time resolution (batch means
/// group neighbours anyway), so a series never costs more than a few MiB however long the input is.
pub const MAX_SERIES_LEN: usize = 1 << 16;

/// A time series of windows in input order, bounded in memory: when it reaches [`MAX_SERIES_LEN`]
/// windows, neighbouring pairs are merged and every later window covers twice as many inputs.
#[derive(Debug, Clone)]
pub struct Series {
    windows: Vec<Window>,
    /// Inputs per kept window (a power of two).
    stride: usize,
    /// The partly filled window of the current stride and how many inputs it holds.
    pending: Option<(Window, usize)>,
    /// Inputs pushed.
    inputs: usize,
}

impl Default for Series {
    fn default() -> Series {
        Series { windows: Vec::new(), stride: 1, pending: None, inputs: 0 }
    }
}

impl Series {
    /// An empty series.
    pub fn new() -> Series {
        Series::default()
    }

    /// Appends one window; windows without steps still count for the time axis but are dropped at the end.
    pub fn push(&mut self, window: Window) {
        self.inputs += 1;
        let (merged, n) = match self.pending.take() {
            Some((w, n)) => (w.add(&window), n + 1),
            None => (window, 1),
        };
        if n < self.stride {
            self.pending = Some((merged, n));
            return;
        }
        self.windows.push(merged);
        if self.windows.len() >= MAX_SERIES_LEN {
            let pairs = std::mem::take(&mut self.windows);
            self.windows = pairs.chunks(2).map(|pair| Window::sum(pair).expect("chunks are never empty")).collect();
            self.stride *= 2;
        }
    }

    /// How many windows were pushed.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The kept windows (those with steps), and how many inputs each covers.
    pub fn finish(mut self) -> (Vec<Window>, usize) {
        if let Some((w, _)) = self.pending.take() {
            self.windows.push(w);
        }
        self.windows.retain(|w| w.steps > 0.0);
        (self.windows, self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_window_matches_the_atom_example() {
        let w = Window::from_distribution(vec![0.0, 1700.0, 8300.0, 0.0]);
        assert_eq!(w.steps, 10000.0);
        assert_eq!(w.accepted, 18300.0);
        assert_eq!(w.positions, Some(vec![10000.0, 8300.0, 0.0]));
    }

    #[test]
    fn a_long_series_merges_neighbours_and_keeps_every_count() {
        let mut series = Series::new();
        let n = MAX_SERIES_LEN * 2 + 3;
        for i in 0..n {
            series.push(Window::new(1.0, (i % 3) as f64));
        }
        assert_eq!(series.inputs(), n);
        let (windows, stride) = series.finish();
        assert!(windows.len() < MAX_SERIES_LEN, "{}", windows.len());
        assert_eq!(stride, 4);
        let total = Window::sum(&windows).unwrap();
        assert_eq!(total.steps, n as f64);
        assert_eq!(total.accepted, (0..n).map(|i| (i % 3) as f64).sum::<f64>());
    }
}
