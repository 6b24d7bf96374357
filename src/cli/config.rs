//! `alsim config [REPO]`: the repository root and every setting in force for a check there, with where
//! each came from (a flag, the configuration file and its line, or alsim's default).

use alsim::config::Setting;
use alsim::report;

use super::Outcome;
use super::pins::{SourceArgs, StrictArgs};

/// Flags of `alsim config`: those of `alsim pins check` that choose what is checked and how.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    strict: StrictArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let place = args.source.place()?;
    let settings = args.source.settings(&place, args.strict.flag())?;
    let shown = |text: String| report::one_line(&text).into_owned();
    let path = |s: &Setting<Option<std::path::PathBuf>>| s.value.as_ref().map(|p| shown(p.display().to_string()));
    let root_from = match place.marker {
        Some(marker) => format!("it holds {marker}"),
        None => "the path named (no .git or golden_al_distribution/ above it)".to_string(),
    };
    let rows = [
        ("root", shown(place.root.display().to_string()), root_from),
        ("reported", place.within.clone().unwrap_or_else(|| ".".into()), "the path named".into()),
        (
            "config",
            settings.file.as_ref().map_or_else(|| "none".into(), |p| shown(p.display().to_string())),
            "the nearest alsim.toml or [tool.alsim] in pyproject.toml between the path named and the root".into(),
        ),
        ("golden", path(&settings.golden).unwrap_or_else(|| "-".into()), settings.golden.origin.to_string()),
        ("allow", path(&settings.allow).unwrap_or_else(|| "-".into()), settings.allow.origin.to_string()),
        ("exclude", shown(settings.exclude.value.join(", ")), settings.exclude.origin.to_string()),
        ("strict", settings.strict.value.to_string(), settings.strict.origin.to_string()),
    ];
    let width = rows.iter().map(|(_, value, _)| value.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, value, from) in rows {
        text.push_str(&format!("{name:<9}{value:<width$}  # {}\n", shown(from)));
    }
    super::emit(&text)?;
    Ok(Outcome::Pass)
}
