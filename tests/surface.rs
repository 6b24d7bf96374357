//! The library's public surface holds still: every public item a crate depending on alsim can name (with the
//! default features) is listed in `tests/data/public_api.txt`, and an item added, removed or made public
//! fails here until the list is updated on purpose (`SNAPSHOTS=overwrite cargo test --test tests surface`
//! rewrites it; the diff is the review).
//!
//! `cargo public-api` (rustdoc JSON) is not available offline, so the list is read from the sources, which
//! rustfmt keeps in one layout: from `src/lib.rs`, every `pub mod` (not `pub(crate)`, not behind the
//! `internals` feature) is entered, and in each module the `pub` items at its top level, the `pub fn`s of its
//! inherent `impl` blocks and the `pub` fields of its structs are listed, `#[cfg(test)]` modules skipped.
//! What it does not see: items made public by a `pub use` are listed as the `use`, not resolved; trait
//! methods and enum variants come with their trait or enum.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const LIST: &str = "tests/data/public_api.txt";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The file of module `name` declared in `file` (`name.rs` or `name/mod.rs` beside it or below it).
fn module_file(file: &Path, name: &str) -> PathBuf {
    let owner = file.file_stem().unwrap();
    let dir = if owner == "lib" || owner == "mod" {
        file.parent().unwrap().to_path_buf()
    } else {
        file.parent().unwrap().join(owner)
    };
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() { flat } else { dir.join(name).join("mod.rs") }
}

/// The name a declaration introduces: the identifier after its keyword.
fn name_after<'a>(rest: &'a str, keyword: &str) -> Option<&'a str> {
    let after = rest.strip_prefix(keyword)?.strip_prefix(' ')?.trim_start();
    let end = after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
    (end > 0).then(|| &after[..end])
}

/// What a `pub` declaration other than `use` declares: its kind and name.
fn declared(rest: &str) -> Option<(&'static str, String)> {
    let rest = rest.trim_start_matches("const fn ").trim_start_matches("async fn ");
    let rest = rest.strip_prefix("unsafe ").unwrap_or(rest);
    for (keyword, kind) in [
        ("fn", "fn"),
        ("struct", "struct"),
        ("enum", "enum"),
        ("trait", "trait"),
        ("type", "type"),
        ("const", "const"),
        ("static", "static"),
        ("mod", "mod"),
    ] {
        if let Some(name) = name_after(rest, keyword) {
            return Some((kind, name.to_string()));
        }
    }
    // A field: `pub name: Type,`.
    let (name, _) = rest.split_once(':')?;
    name.chars().all(|c| c.is_alphanumeric() || c == '_').then(|| ("field", name.to_string()))
}

/// The type an inherent `impl` block at the top level is for (`impl<T> Name<T> {`); `None` for a trait impl.
fn inherent_impl(line: &str) -> Option<String> {
    let rest = line.strip_prefix("impl")?;
    if !(rest.starts_with(' ') || rest.starts_with('<')) || rest.contains(" for ") {
        return None;
    }
    // Past the impl's own generics (`impl<T: Into<f64>> Name<T>`), the type's name.
    let mut depth = 0;
    let start = rest
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            depth == 0 && c.is_alphanumeric()
        })
        .map_or(rest.len(), |(i, _)| i);
    let ty = &rest[start..];
    let end = ty.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(ty.len());
    Some(ty[..end].to_string())
}

/// Every public item of the module at `file`, named under `path`, into `out`.
fn walk(file: &Path, path: &str, out: &mut BTreeSet<String>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    // The top-level block a line is in: a struct or inherent impl (whose public members count), or a test
    // module or other block (whose lines do not).
    let mut owner: Option<Option<String>> = None;
    let mut attributes: Vec<&str> = Vec::new();
    // A `pub use` over several lines, gathered until its `;`.
    let mut using: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        if let Some(statement) = &mut using {
            statement.push_str(line.trim());
            if line.ends_with(';') {
                out.insert(format!("use {path}: {}", statement.trim_end_matches(';').replace(",}", "}")));
                using = None;
            }
            continue;
        }
        let top = !line.starts_with([' ', '}']);
        if line == "}" || line.starts_with("} ") || line == "};" {
            owner = None;
            continue;
        }
        if let Some(block) = &owner {
            let member = line.strip_prefix("    ").filter(|m| !m.starts_with(' '));
            if let (Some(ty), Some(rest)) = (block, member.and_then(|m| m.strip_prefix("pub ")))
                && let Some((kind, name)) = declared(rest)
            {
                let kind = if kind == "fn" { "method" } else { kind };
                out.insert(format!("{kind} {path}::{ty}::{name}"));
            }
            continue;
        }
        if !top {
            continue;
        }
        if line.starts_with("#[") {
            attributes.push(line);
            continue;
        }
        let skipped = attributes.iter().any(|a| a.contains("cfg(test)") || a.contains("feature = \"internals\""));
        attributes.clear();
        let opens = line.ends_with('{');
        if let Some(rest) = line.strip_prefix("pub use ")
            && !skipped
        {
            if rest.ends_with(';') {
                out.insert(format!("use {path}: {}", rest.trim_end_matches(';')));
            } else {
                using = Some(rest.to_string());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("pub ")
            && !skipped
            && let Some((kind, name)) = declared(rest)
        {
            out.insert(format!("{kind} {path}::{name}"));
            if kind == "mod" && !opens {
                walk(&module_file(file, &name), &format!("{path}::{name}"), out);
            }
            let holds_fields = kind == "struct" && opens;
            if opens {
                owner = Some(holds_fields.then(|| name.clone()));
            }
            continue;
        }
        if opens {
            owner = Some(if skipped { None } else { inherent_impl(line) });
        }
    }
}

fn surface() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(&root().join("src/lib.rs"), "alsim", &mut out);
    out
}

#[test]
fn the_public_surface_is_the_committed_list() {
    let found: Vec<String> = surface().into_iter().collect();
    let text = found.join("\n") + "\n";
    let list = root().join(LIST);
    if std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite") {
        std::fs::write(&list, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&list).unwrap_or_default();
    let committed: BTreeSet<&str> = committed.lines().collect();
    let found_set: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    let added: Vec<&&str> = found_set.difference(&committed).collect();
    let removed: Vec<&&str> = committed.difference(&found_set).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public surface moved (SNAPSHOTS=overwrite cargo test --test tests surface rewrites {LIST}):\n\
         new: {added:#?}\ngone: {removed:#?}"
    );
}

#[test]
fn the_walker_sees_items_methods_and_fields_and_skips_what_is_not_public() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod a;\npub(crate) mod b;\nmod c;\n#[cfg(feature = \"internals\")]\npub mod d;\npub use a::{\n    Thing,\n};\n",
    )
    .unwrap();
    std::fs::create_dir(src.join("a")).unwrap();
    std::fs::write(
        src.join("a/mod.rs"),
        "pub mod inner;\n\npub struct Thing {\n    pub size: usize,\n    pub model: String,\n    kept: bool,\n}\n\nimpl Thing {\n    pub fn new() -> Self {\n        todo!()\n    }\n\n    fn private(&self) {}\n}\n\nimpl Default for Thing {\n    fn default() -> Self {\n        todo!()\n    }\n}\n\npub(crate) fn hidden() {}\n\n#[cfg(test)]\nmod tests {\n    pub fn helper() {}\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("a/inner.rs"), "pub const LIMIT: u64 = 1;\npub enum Kind {\n    One,\n}\n").unwrap();
    let mut out = BTreeSet::new();
    walk(&src.join("lib.rs"), "x", &mut out);
    let out: Vec<&str> = out.iter().map(String::as_str).collect();
    assert_eq!(
        out,
        [
            "const x::a::inner::LIMIT",
            "enum x::a::inner::Kind",
            "field x::a::Thing::model",
            "field x::a::Thing::size",
            "method x::a::Thing::new",
            "mod x::a",
            "mod x::a::inner",
            "struct x::a::Thing",
            "use x: a::{Thing}",
        ]
    );
}
