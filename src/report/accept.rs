//! Tables for [`PinAnalysis`] (`alsim accept`) and [`RatesSetting`] (`alsim pin --shape real`).

use super::{Report, Table, fixed, fixed_list};
use crate::accept::{PinAnalysis, RatesSetting};

impl Report for RatesSetting {
    fn tables(&self) -> Vec<Table> {
        let mut table = Table::new(
            format!(
                "{} rates pin for AL {} at k = {} ({}): [{}]",
                self.engine.display_name(),
                fixed(self.golden_al, 2),
                self.k,
                self.source,
                self.pin.list(", ")
            ),
            &["setting"],
        );
        for line in &self.lines {
            table.row(vec![line.clone()]);
        }
        vec![table]
    }

    fn notes(&self) -> Vec<String> {
        vec![format!("rates: {}; implied AL 1 + Σ p_i = {}", self.provenance, fixed(self.implied_al, 4))]
    }
}

impl Report for PinAnalysis {
    fn tables(&self) -> Vec<Table> {
        let real = &self.real;
        let mut positions = Table::new(
            format!(
                "Real acceptance, k = {}, AL {:.3} ({}); mean accepted drafts {:.3}, variance {:.3}",
                self.k,
                real.acceptance_length,
                self.source,
                real.acceptance_length - 1.0,
                real.variance
            ),
            &["position i", "unconditional p_i", "conditional c_i"],
        );
        for (i, (p, c)) in real.unconditional.iter().zip(&real.conditional).enumerate() {
            positions.row(vec![(i + 1).to_string(), fixed(*p, 3), fixed(*c, 3)]);
        }

        let mut headers = vec!["accepted drafts a".to_string(), "tokens a+1".to_string(), "real".to_string()];
        headers.extend(self.schedules.iter().map(|s| s.schedule.kind.label().to_string()));
        let mut distribution = Table {
            title: format!("Distribution of accepted drafts per step, pin AL {:.2}", self.pinned_al),
            headers,
            rows: Vec::new(),
        };
        for j in 0..=self.k {
            let mut row = vec![j.to_string(), (j + 1).to_string(), fixed(real.distribution.probabilities()[j], 3)];
            row.extend(self.schedules.iter().map(|s| fixed(s.schedule.distribution.probabilities()[j], 3)));
            distribution.row(row);
        }

        let mut gap = Table::new(
            "Real versus synthetic (same pin, other shape)",
            &[
                "acceptance",
                "engines",
                "per-position p",
                "mean AL",
                "Var(a)",
                "P(a=0)",
                "TV distance",
                "draw shared by batch",
            ],
        );
        gap.row(vec![
            "real".into(),
            "-".into(),
            format!("[{}]", fixed_list(&real.unconditional, 2)),
            fixed(real.acceptance_length, 3),
            fixed(real.variance, 3),
            fixed(real.distribution.p_zero(), 3),
            "0".into(),
            "no".into(),
        ]);
        for s in &self.schedules {
            gap.row(vec![
                s.schedule.kind.label().into(),
                s.engines.iter().map(|e| e.display_name()).collect::<Vec<_>>().join(", "),
                format!("[{}]", fixed_list(s.schedule.distribution.acceptance().unconditional(), 2)),
                fixed(s.mean_al, 3),
                fixed(s.variance, 3),
                fixed(s.p_zero, 3),
                fixed(s.total_variation, 3),
                if s.shared_across_batch { "yes" } else { "no" }.into(),
            ]);
        }
        vec![positions, distribution, gap]
    }

    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> =
            self.schedules.iter().map(|s| format!("{}: {}", s.schedule.kind.label(), s.schedule.note)).collect();
        let pin = &self.rates_pin;
        notes.push(format!(
            "rates pin [{}]: {}; implied AL {}",
            pin.list(", "),
            pin.describe(),
            fixed(pin.implied_al(), 4)
        ));
        for setting in &self.rates_settings {
            notes.push(format!("{} rates pin: {}", setting.engine.display_name(), setting.lines.join(" ")));
        }
        if let Some(pinned) = self.schedule(crate::accept::schedule::ScheduleKind::MinVariance) {
            let spread = match pinned.variance_ratio {
                Some(ratio) => {
                    format!("real acceptance spreads tokens per step {ratio:.1}× more than the minimum-variance pin")
                }
                None => "the minimum-variance pin emits the same number of tokens every step".to_string(),
            };
            notes.push(format!(
                "{spread}; the first draft is rejected in {} of real steps and {} of pinned steps",
                fixed(self.real.distribution.p_zero(), 3),
                fixed(pinned.p_zero, 3)
            ));
        }
        notes
    }
}
