//! The table from a benchmark repository's names to alsim's profiles (`profiles/sweep_map.csv`, embedded;
//! `--map FILE` rows with the same columns are tried first): runner labels to hardware keys, served model
//! names to model keys, each row with its source. A name no row matches is unmapped — reported, never
//! guessed.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::perf::csv::CsvTable;
use crate::perf::profile::Profiles;

const MAP_CSV: &str = include_str!("../../profiles/sweep_map.csv");

/// What a row maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MapKind {
    /// A master config's `runner:` label, to a hardware profile.
    Runner,
    /// An entry's `model:`, to a model profile.
    Model,
}

impl MapKind {
    /// The word used in the table and in reports.
    pub fn name(self) -> &'static str {
        match self {
            MapKind::Runner => "runner",
            MapKind::Model => "model",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapRow {
    /// What it maps.
    pub kind: MapKind,
    /// The name as a glob of globset's syntax (the crate's one dialect: `*` any run of characters), matched
    /// ignoring case.
    pub pattern: String,
    /// The profile key.
    pub profile: String,
    /// Where the mapping comes from.
    pub source: String,
    /// The table's file and the row's line.
    pub at: String,
}

/// The mapping table: rows in the order tried.
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    rows: Vec<MapRow>,
    /// Each row's pattern, compiled once.
    matchers: Vec<globset::GlobMatcher>,
}

impl NameMap {
    /// The embedded table (`profiles/sweep_map.csv`), checked against `profiles`.
    ///
    /// # Errors
    /// As [`NameMap::parse`]: a row naming a profile `profiles` lacks (a user's profile file replaced it).
    pub fn embedded(profiles: &Profiles) -> Result<NameMap> {
        NameMap::parse(MAP_CSV, "<embedded>/profiles/sweep_map.csv", profiles)
    }

    /// Reads a table with the columns `kind,pattern,profile,source`.
    ///
    /// # Errors
    /// [`Error::Parse`] naming the file and line: a missing column, a kind other than runner or model, an
    /// empty pattern, a profile key `profiles` does not know, an empty source; or a file with no rows.
    pub fn parse(text: &str, origin: &str, profiles: &Profiles) -> Result<NameMap> {
        let table = CsvTable::parse(text, origin)?;
        table.require(&["kind", "pattern", "profile", "source"])?;
        let mut rows = Vec::new();
        let mut matchers = Vec::new();
        for row in table.rows() {
            let kind = match row.str("kind")?.to_ascii_lowercase().as_str() {
                "runner" => MapKind::Runner,
                "model" => MapKind::Model,
                other => return Err(row.error("kind", &format!("'{other}' is neither runner nor model"))),
            };
            let profile = row.str("profile")?;
            let known = match kind {
                MapKind::Runner => profiles.hardware(profile).map(|h| h.key.clone()),
                MapKind::Model => profiles.model(profile).map(|m| m.key.clone()),
            };
            let profile = known.map_err(|e| row.error("profile", &e.to_string()))?;
            let matcher = globset::GlobBuilder::new(row.str("pattern")?)
                .case_insensitive(true)
                .build()
                .map_err(|e| row.error("pattern", &e.to_string()))?;
            matchers.push(matcher.compile_matcher());
            rows.push(MapRow {
                kind,
                pattern: row.str("pattern")?.to_string(),
                profile,
                source: row.str("source")?.to_string(),
                at: format!("{origin}:{}", row.line()),
            });
        }
        if rows.is_empty() {
            return Err(Error::parse(origin, None, "the table holds no rows"));
        }
        Ok(NameMap { rows, matchers })
    }

    /// Reads the table at `path` through the bounded reader.
    ///
    /// # Errors
    /// [`Error::Io`]/[`Error::Unreadable`] when unreadable; as [`NameMap::parse`].
    pub fn read(path: &Path, profiles: &Profiles) -> Result<NameMap> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        NameMap::parse(&text, &path.display().to_string(), profiles)
    }

    /// This table's rows tried before `rest`'s.
    pub fn before(mut self, rest: NameMap) -> NameMap {
        self.rows.extend(rest.rows);
        self.matchers.extend(rest.matchers);
        self
    }

    /// The first row of `kind` whose pattern matches `name`.
    pub fn lookup(&self, kind: MapKind, name: &str) -> Option<&MapRow> {
        let name = name.trim();
        self.rows.iter().zip(&self.matchers).find(|(r, m)| r.kind == kind && m.is_match(name)).map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> NameMap {
        NameMap::embedded(&Profiles::embedded()).unwrap()
    }

    #[test]
    fn patterns_match_whole_names_ignoring_case() {
        let glob = |pattern: &str, name: &str| {
            let table = format!("kind,pattern,profile,source\nrunner,{pattern},h100,test\n");
            NameMap::parse(&table, "t.csv", &Profiles::embedded()).unwrap().lookup(MapKind::Runner, name).is_some()
        };
        assert!(glob("b200", "B200") && !glob("b200", "gb200") && !glob("b200", "b200-new"));
        assert!(glob("b200-*", "b200-new") && !glob("b200-*", "b200"));
        assert!(glob("nvidia/DeepSeek-R1-0528-*FP4*", "nvidia/DeepSeek-R1-0528-NVFP4-v2"));
        assert!(!glob("a*a", "a") && glob("a*a", "aa") && glob("*", ""));
        let bad =
            NameMap::parse("kind,pattern,profile,source\nrunner,b[200,h100,test\n", "t.csv", &Profiles::embedded());
        assert!(bad.unwrap_err().to_string().contains("t.csv:2: column 'pattern'"));
    }

    #[test]
    fn the_embedded_table_maps_known_names_and_leaves_the_rest_unmapped() {
        let map = embedded();
        let runner = |n: &str| map.lookup(MapKind::Runner, n).map(|r| r.profile.as_str());
        let model = |n: &str| map.lookup(MapKind::Model, n).map(|r| r.profile.as_str());
        assert_eq!(runner("cluster:gb300-nv"), Some("b300"));
        assert_eq!(runner("mi355x-disagg"), Some("mi355x"));
        assert_eq!(runner("h200"), Some("h200"));
        assert_eq!(model("amd/DeepSeek-R1-0528-MXFP4-v2"), Some("dsr1"));
        assert_eq!(model("nvidia/Qwen3.5-397B-A17B-NVFP4-V2"), Some("qwen3.5-397b-a17b"));
        // Unknown names are unmapped, whatever they resemble.
        assert_eq!(runner("rtx6000pro-lat"), None);
        assert_eq!(runner("cluster:h100x"), None);
        assert_eq!(model("zai-org/GLM-5.1-FP8"), None);
        assert_eq!(map.lookup(MapKind::Runner, "moonshotai/Kimi-K3"), None, "a model name is no runner label");
        let row = map.lookup(MapKind::Runner, "b300").unwrap();
        assert!(row.at.starts_with("<embedded>/profiles/sweep_map.csv:") && !row.source.is_empty());
    }

    #[test]
    fn a_users_rows_come_first() {
        let p = Profiles::embedded();
        let mine = NameMap::parse("kind,pattern,profile,source\nrunner,b200,h100,test\n", "mine.csv", &p).unwrap();
        let map = mine.before(embedded());
        assert_eq!(map.lookup(MapKind::Runner, "b200").unwrap().profile, "h100");
        assert_eq!(map.lookup(MapKind::Runner, "b300").unwrap().profile, "b300");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let p = Profiles::embedded();
        let bad = |text: &str| NameMap::parse(text, "m.csv", &p).unwrap_err().to_string();
        let head = "kind,pattern,profile,source\n# a comment\n";
        let e = bad(&format!("{head}runner,b200,b200,ok\ngpu,x,b200,s\n"));
        assert!(e.starts_with("m.csv:4: column 'kind'") && e.contains("'gpu'"), "{e}");
        let e = bad(&format!("{head}runner,x,tpu9,s\n"));
        assert!(e.starts_with("m.csv:3: column 'profile'") && e.contains("tpu9"), "{e}");
        let e = bad(&format!("{head}model,x,dsr1,\n"));
        assert!(e.starts_with("m.csv:3: column 'source'"), "{e}");
        assert!(bad("kind,pattern,profile\n").contains("missing column(s) source"));
        assert!(bad(head).contains("no rows"));
    }
}
