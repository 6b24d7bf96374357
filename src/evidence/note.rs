//! What reading and pooling evidence noted: the assumptions made and the irregularities met, as findings of
//! the checks' vocabulary ([`crate::diagnostic`]) — a class, a severity and the place in the file — so a
//! front end can list, filter and count them as it does a check's.

use serde::Serialize;

use crate::diagnostic::{Finding, FindingClass, Severity};

/// A note about evidence: reading or pooling it assumed something, or met something irregular.
pub type Note = Finding<NoteKind>;

/// What a note is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteKind {
    /// A counter series restarted (the server, or one rank) or went missing between scrapes or log lines:
    /// counts start again from the restart, and what ran before it is lost.
    SeriesBreak,
    /// The input ends inside a line (a file still being written, or cut short): that line is left out.
    CutLine,
    /// Lines left out on purpose: other TP ranks (repeating rank 0), over-long lines, another drafter's
    /// statistics.
    SkippedLines,
    /// How steps and windows are counted from what the engine writes: cumulative counts, SGLang's
    /// weighting by running requests, llama.cpp's recovered steps, windows merged to bound memory.
    Counting,
    /// The draft length k was not read from the evidence itself: it was given, or inferred.
    AssumedK,
    /// Several runs pooled into one figure, and what pooling assumed or lost.
    Pooling,
    /// The time series is too short to tell slow drift from noise: the interval may be too narrow.
    ShortSeries,
    /// The evidence cannot tell a pinned run's read-back from real acceptance.
    ReadBack,
}

impl FindingClass for NoteKind {
    fn name(self) -> &'static str {
        match self {
            NoteKind::SeriesBreak => "series-break",
            NoteKind::CutLine => "cut-line",
            NoteKind::SkippedLines => "skipped-lines",
            NoteKind::Counting => "counting",
            NoteKind::AssumedK => "assumed-k",
            NoteKind::Pooling => "pooling",
            NoteKind::ShortSeries => "short-series",
            NoteKind::ReadBack => "read-back",
        }
    }

    /// What loses counts or weakens an interval is a warning; how the figures were read is a note.
    fn severity(self) -> Severity {
        match self {
            NoteKind::SeriesBreak | NoteKind::CutLine | NoteKind::ShortSeries | NoteKind::ReadBack => Severity::Warning,
            NoteKind::SkippedLines | NoteKind::Counting | NoteKind::AssumedK | NoteKind::Pooling => Severity::Note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Location;

    #[test]
    fn a_note_reads_as_its_place_then_its_message() {
        let note = Note::new(NoteKind::SeriesBreak, Location::in_file("run.prom", Some(7)), "2 series went down");
        assert_eq!((note.severity, note.to_string()), (Severity::Warning, "run.prom:7: 2 series went down".into()));
        assert_eq!(serde_json::to_value(note).unwrap()["class"], "series-break");
    }
}
