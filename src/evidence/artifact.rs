//! InferenceX eval-run artifacts as downloaded: a zip (how GitHub delivers every artifact), a tarball (the
//! multi-node `multinode_server_logs.tar.gz`), or the folder either was unpacked into (docs/artifacts.md).
//!
//! This module owns
//! - opening an artifact: what it is decided by its first bytes, never its name; a file that is neither
//!   text nor a zip, tar or gzip archive is refused by name. Archives are read in memory, member by member:
//!   nothing is extracted, a member that names a path outside the archive (absolute, `..`) refuses the
//!   archive, links and special files are skipped unread, and sizes are bounded ([`MEMBER_LIMIT`] a member,
//!   [`ARTIFACT_LIMIT`] all members together, [`MEMBER_COUNT_LIMIT`] members). One archive inside another
//!   (the tarball inside its zip) is opened; one level deeper is not;
//! - the layout: which member is evidence (server logs, Prometheus scrapes, AIPerf
//!   `server_metrics_export.json`), which states the run's facts (`meta_env.json`, the artifact's own
//!   name), and why each other member is skipped. A worker's role is read from its log's name
//!   (`<node>_decode_w0.out`, `decode_<host>.log`): the decode role's acceptance is read, never the
//!   prefill role's, and in a multi-node tarball a log that names no role is skipped;
//! - the run's facts ([`RunFacts`]) from the artifact name (`RESULT_FILENAME` of the workflow templates)
//!   and `meta_env.json`, for finding the master-config entry the run belongs to.
//!
//! Each evidence member is read by the readers of [`super::read`]; its origin is the artifact's path with
//! the member's after `!` (`eval_server_logs_x.zip!server.log:12`).

use std::io::{Cursor, Read};
use std::path::{Component, Path};

use serde::Serialize;

use super::{Evidence, InputFormat, ReadOptions};
use crate::error::{Error, Result};

/// The largest member read (a server log of an eval run is a few MB).
pub const MEMBER_LIMIT: u64 = 256 * 1024 * 1024;
/// The most bytes read out of one artifact, every member and nested archive together: a zip bomb stops here.
pub const ARTIFACT_LIMIT: u64 = 2 * 1024 * 1024 * 1024;
/// The most members looked at in one artifact.
pub const MEMBER_COUNT_LIMIT: usize = 100_000;
/// The largest `meta_env.json` read (the real one is under 1 KiB).
const META_LIMIT: usize = 64 * 1024;
/// How many bytes decide whether a file is text.
const SNIFF_BYTES: usize = 8192;
/// How deep a folder artifact is walked.
const FOLDER_DEPTH: usize = 16;

/// What an artifact path turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Container {
    /// One text file: a log, a scrape or a JSON export, read as `eval` always read files.
    File,
    /// A folder (an artifact unpacked).
    Folder,
    /// A zip archive (an artifact as GitHub delivers it).
    Zip,
    /// A tar archive, gzip-compressed or not.
    Tar,
}

/// A serving worker's role in a disaggregated deployment, read from its log's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerRole {
    /// Prefill (context) workers: they verify no drafts worth judging a pin by.
    Prefill,
    /// Decode (generation) workers: their acceptance is the pin's.
    Decode,
    /// Aggregated workers, serving both.
    Aggregated,
}

impl WorkerRole {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            WorkerRole::Prefill => "prefill",
            WorkerRole::Decode => "decode",
            WorkerRole::Aggregated => "aggregated",
        }
    }
}

/// A member read as evidence.
#[derive(Debug, Clone, Serialize)]
pub struct ReadMember {
    /// Its path inside the artifact (`!` between nested archives).
    pub path: String,
    /// The role its name states, if any.
    pub role: Option<WorkerRole>,
    /// How it was read.
    pub format: InputFormat,
    /// How many evidence sources it gave (several with `--split`).
    pub sources: usize,
}

/// A member not read as evidence, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedMember {
    /// Its path inside the artifact.
    pub path: String,
    /// Why it was skipped.
    pub reason: String,
}

/// What an artifact states about the run that made it: its `RESULT_FILENAME`'s parts and `meta_env.json`.
/// Every fact is optional; `from` says where they were read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunFacts {
    /// Where the facts were read (the artifact name, `meta_env.json` members).
    pub from: Vec<String>,
    /// The run's `RESULT_FILENAME`, from the artifact name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_filename: Option<String>,
    /// The model prefix (`dsr1`): `meta_env.json` `infmax_model_prefix`, else the experiment name's head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_prefix: Option<String>,
    /// `precision`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// `framework` (`sglang`, `dynamo-trt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// `spec-decoding` (`mtp`, `eagle3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_decoding: Option<String>,
    /// The scenario (`fixed-seq-len`, `agentic-coding`), by the experiment name's shape: sequence lengths
    /// (`dsr1_1k1k`) or a concurrency and KV-offload words (`dsr1_tp8_conc4_kvnone_spec-mtp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// Input sequence length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isl: Option<u64>,
    /// Output sequence length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub osl: Option<u64>,
    /// Tensor parallelism of the (decode) workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp: Option<u64>,
    /// Expert parallelism of the (decode) workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ep: Option<u64>,
    /// Concurrencies run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conc: Vec<u64>,
    /// The runner: `meta_env.json` `hw`, else the machine name that ends `RESULT_FILENAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// Whether the run was multi-node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multinode: Option<bool>,
}

impl RunFacts {
    /// The facts read, as `name=value` words for messages.
    pub fn words(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut put = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                out.push(format!("{name}={value}"));
            }
        };
        put("model-prefix", self.model_prefix.clone());
        put("precision", self.precision.clone());
        put("framework", self.framework.clone());
        put("spec-decoding", self.spec_decoding.clone());
        put("scenario", self.scenario.clone());
        put("isl", self.isl.map(|n| n.to_string()));
        put("osl", self.osl.map(|n| n.to_string()));
        put("tp", self.tp.map(|n| n.to_string()));
        put("ep", self.ep.map(|n| n.to_string()));
        put(
            "conc",
            (!self.conc.is_empty()).then(|| self.conc.iter().map(u64::to_string).collect::<Vec<_>>().join("x")),
        );
        put("runner", self.runner.clone());
        put("multinode", self.multinode.map(|m| m.to_string()));
        out
    }

    /// Fills the facts `other` states and these do not (the first artifact, or `meta_env.json` over the
    /// name, wins).
    pub fn merge(&mut self, other: RunFacts) {
        fn fill<T>(mine: &mut Option<T>, theirs: Option<T>) {
            if mine.is_none() {
                *mine = theirs;
            }
        }
        self.from.extend(other.from);
        fill(&mut self.result_filename, other.result_filename);
        fill(&mut self.model_prefix, other.model_prefix);
        fill(&mut self.precision, other.precision);
        fill(&mut self.framework, other.framework);
        fill(&mut self.spec_decoding, other.spec_decoding);
        fill(&mut self.scenario, other.scenario);
        fill(&mut self.isl, other.isl);
        fill(&mut self.osl, other.osl);
        fill(&mut self.tp, other.tp);
        fill(&mut self.ep, other.ep);
        fill(&mut self.runner, other.runner);
        fill(&mut self.multinode, other.multinode);
        if self.conc.is_empty() {
            self.conc = other.conc;
        }
    }
}

/// Everything read from one artifact.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactReading {
    /// The path given.
    pub artifact: String,
    /// What it turned out to be.
    pub container: Container,
    /// Members read as evidence.
    pub read: Vec<ReadMember>,
    /// Members skipped, with why.
    pub skipped: Vec<SkippedMember>,
    /// The run's facts.
    pub facts: RunFacts,
    /// The evidence, in member order.
    #[serde(skip)]
    pub evidence: Vec<Evidence>,
}

/// Reads an artifact: a zip, a tarball, a folder, or one text evidence file.
///
/// # Errors
/// [`Error::Unreadable`] for a file that is neither text nor a known archive, or an archive over its
/// limits; [`Error::Parse`] naming the member for a path that leaves the archive, an archive that cannot be
/// read, or evidence a reader refuses (its file and line); [`Error::Io`] when the path cannot be read.
pub fn read_artifact(path: &Path, options: &ReadOptions) -> Result<ArtifactReading> {
    walk(path, options, true)
}

/// The run's facts an artifact states (its name, `meta_env.json`), without reading its evidence: what
/// finds the pin before the evidence is read at the pin's k.
///
/// # Errors
/// As [`read_artifact`], but for the evidence readers' own errors.
pub fn read_facts(path: &Path) -> Result<RunFacts> {
    walk(path, &ReadOptions::default(), false).map(|reading| reading.facts)
}

fn walk(path: &Path, options: &ReadOptions, evidence: bool) -> Result<ArtifactReading> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mut walk = Walk::new(&name, options, evidence);
    let container = if meta.is_dir() {
        walk.facts.merge(facts_from_name(path));
        walk.folder(path, "", 0)?;
        Container::Folder
    } else {
        let mut file = crate::input::open_regular(path)?;
        let mut head = Vec::new();
        (&mut file).take(SNIFF_BYTES as u64).read_to_end(&mut head).map_err(|e| Error::io(path, e))?;
        match Kind::of(&head) {
            Kind::Text => {
                drop(file);
                let evidence = if evidence { super::read_path(path, None, options)? } else { Vec::new() };
                let format = evidence.first().map_or(InputFormat::Log, |e| e.format);
                let member = ReadMember { path: name.clone(), role: role_of(&name), format, sources: evidence.len() };
                return Ok(ArtifactReading {
                    artifact: name,
                    container: Container::File,
                    read: vec![member],
                    skipped: Vec::new(),
                    facts: RunFacts::default(),
                    evidence,
                });
            }
            Kind::Binary => {
                return Err(Error::unreadable(
                    path,
                    "neither text nor a known archive (zip, tar, tar.gz): give a server log, a metrics scrape, an AIPerf export, or an artifact as downloaded",
                ));
            }
            kind => {
                use std::io::Seek;
                file.rewind().map_err(|e| Error::io(path, e))?;
                walk.facts.merge(facts_from_name(path));
                walk.archive(kind, file, "", 0)?;
                if kind == Kind::Zip { Container::Zip } else { Container::Tar }
            }
        }
    };
    let Walk { read, skipped, facts, evidence, .. } = walk;
    Ok(ArtifactReading { artifact: name, container, read, skipped, facts, evidence })
}

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Zip,
    Gzip,
    Tar,
    Text,
    Binary,
}

impl Kind {
    fn of(head: &[u8]) -> Kind {
        if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            Kind::Zip
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Kind::Gzip
        } else if head.get(257..262) == Some(b"ustar") {
            Kind::Tar
        } else if is_text(head) {
            Kind::Text
        } else {
            Kind::Binary
        }
    }
}

/// Text: a first line (of the sniffed head) without a NUL byte and in UTF-8, but for a character the head
/// cuts. Binary formats show themselves in their first bytes; a text file damaged further on goes to its
/// reader, which names the line.
fn is_text(head: &[u8]) -> bool {
    let first = memchr::memchr(b'\n', head).map_or(head, |end| &head[..end]);
    if first.contains(&0) {
        return false;
    }
    match std::str::from_utf8(first) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// The walk over one artifact's members.
struct Walk<'a> {
    artifact: &'a str,
    options: &'a ReadOptions,
    /// Whether evidence members are read (else only the facts are).
    reading: bool,
    read: Vec<ReadMember>,
    skipped: Vec<SkippedMember>,
    facts: RunFacts,
    evidence: Vec<Evidence>,
    /// Bytes read so far, against [`ARTIFACT_LIMIT`].
    spent: u64,
    members: usize,
}

/// What a member's name says to do with it.
enum Plan {
    Facts,
    Read,
    Skip(&'static str),
}

impl<'a> Walk<'a> {
    fn new(artifact: &'a str, options: &'a ReadOptions, reading: bool) -> Self {
        Walk {
            artifact,
            options,
            reading,
            read: Vec::new(),
            skipped: Vec::new(),
            facts: RunFacts::default(),
            evidence: Vec::new(),
            spent: 0,
            members: 0,
        }
    }

    fn skip(&mut self, path: &str, reason: impl Into<String>) {
        self.skipped.push(SkippedMember { path: path.to_string(), reason: reason.into() });
    }

    fn count(&mut self) -> Result<()> {
        self.members += 1;
        if self.members > MEMBER_COUNT_LIMIT {
            return Err(Error::unreadable(self.artifact, format!("more than {MEMBER_COUNT_LIMIT} members")));
        }
        Ok(())
    }

    fn folder(&mut self, dir: &Path, prefix: &str, depth: usize) -> Result<()> {
        let mut entries = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| Error::io(dir, e))?;
        entries.sort();
        for path in entries {
            self.count()?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let member = format!("{prefix}{name}");
            let meta = std::fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
            if meta.is_dir() {
                if depth + 1 >= FOLDER_DEPTH {
                    self.skip(&member, format!("a folder more than {FOLDER_DEPTH} levels deep: not walked"));
                } else {
                    self.folder(&path, &format!("{member}/"), depth + 1)?;
                }
                continue;
            }
            let entry = Entry::of(meta.file_type().is_symlink(), meta.is_file(), meta.len());
            let at = path.display().to_string();
            self.admit(&member, entry, at, 0, false, || crate::input::open_regular(&path))?;
        }
        Ok(())
    }

    /// Reads one entry of a folder or archive, found at `at`, unless it is a link, a special file, a member
    /// [`plan`] skips, or larger than [`MEMBER_LIMIT`]; `open` gives its bytes only when they are read.
    fn admit<R: Read>(
        &mut self,
        member: &str,
        entry: Entry,
        at: String,
        depth: usize,
        in_tar: bool,
        open: impl FnOnce() -> Result<R>,
    ) -> Result<()> {
        match entry {
            Entry::Link => self.skip(member, "a link: not followed"),
            Entry::Special => self.skip(member, "not a regular file"),
            Entry::Regular { size } => match plan(member, in_tar) {
                Plan::Skip(reason) => self.skip(member, reason),
                _ if size > MEMBER_LIMIT => {
                    self.skip(member, format!("larger than the {} MiB member limit", MEMBER_LIMIT >> 20))
                }
                _ => {
                    let bytes = self.take(open()?, &at)?;
                    self.member(member, &at, &bytes, depth, in_tar)?;
                }
            },
        }
        Ok(())
    }

    fn spend(&mut self, bytes: u64) -> Result<()> {
        self.spent += bytes;
        if self.spent > ARTIFACT_LIMIT {
            return Err(Error::unreadable(
                self.artifact,
                format!("its members expand past the {} GiB artifact limit", ARTIFACT_LIMIT >> 30),
            ));
        }
        Ok(())
    }

    /// Reads the members of an archive; `prefix` is the archive's own member path and `!` (empty for the
    /// artifact itself).
    fn archive<R: Read + std::io::Seek>(&mut self, kind: Kind, reader: R, prefix: &str, depth: usize) -> Result<()> {
        let origin = match prefix.strip_suffix('!') {
            Some(inner) => format!("{}!{inner}", self.artifact),
            None => self.artifact.to_string(),
        };
        // What a tar stream expands to is bounded as it is read, members skipped unread included.
        let budget = |inner| Budget { inner, left: ARTIFACT_LIMIT };
        match kind {
            Kind::Zip => self.zip(reader, prefix, depth, &origin),
            Kind::Gzip => self.tar(budget(Box::new(flate2::read::GzDecoder::new(reader))), prefix, depth, &origin),
            Kind::Tar => self.tar(budget(Box::new(reader)), prefix, depth, &origin),
            Kind::Text | Kind::Binary => Err(Error::parse(&origin, None, "not an archive")),
        }
    }

    fn zip<R: Read + std::io::Seek>(&mut self, reader: R, prefix: &str, depth: usize, origin: &str) -> Result<()> {
        let bad = |e: zip::result::ZipError| Error::parse(origin, None, format!("not a readable zip archive: {e}"));
        let mut archive = zip::ZipArchive::new(reader).map_err(bad)?;
        for i in 0..archive.len() {
            self.count()?;
            let mut file = archive.by_index(i).map_err(bad)?;
            let raw = file.name().map(|n| n.into_owned()).map_err(bad)?;
            let Some(inside) = file.enclosed_name() else {
                return Err(escape(origin, &raw));
            };
            let member = format!("{prefix}{}", inside.to_string_lossy());
            if file.is_dir() {
                continue;
            }
            // The file-type bits of a Unix mode: only regular files (or none stated) are read.
            let special = file.unix_mode().is_some_and(|m| m & 0o170000 != 0 && m & 0o170000 != 0o100000);
            let entry = Entry::of(file.is_symlink(), !special, file.size());
            let at = format!("{}!{member}", self.artifact);
            self.admit(&member, entry, at, depth, false, || Ok(&mut file))?;
        }
        Ok(())
    }

    /// A member's bytes, up to [`MEMBER_LIMIT`] (the size an archive states may lie), counted against
    /// [`ARTIFACT_LIMIT`].
    fn take(&mut self, reader: impl Read, origin: &str) -> Result<Vec<u8>> {
        let mut content = Vec::new();
        reader
            .take(MEMBER_LIMIT + 1)
            .read_to_end(&mut content)
            .map_err(|e| Error::parse(origin, None, format!("cannot be read: {e}")))?;
        if content.len() as u64 > MEMBER_LIMIT {
            return Err(Error::unreadable(
                origin,
                format!(
                    "expands past the {} MiB member limit its archive entry stated it was under",
                    MEMBER_LIMIT >> 20
                ),
            ));
        }
        self.spend(content.len() as u64)?;
        Ok(content)
    }

    fn tar(&mut self, reader: impl Read, prefix: &str, depth: usize, origin: &str) -> Result<()> {
        let bad = |e: std::io::Error| Error::parse(origin, None, format!("not a readable tar archive: {e}"));
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().map_err(bad)? {
            self.count()?;
            let mut entry = entry.map_err(bad)?;
            let inside = entry.path().map_err(bad)?.into_owned();
            if inside
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_)))
            {
                return Err(escape(origin, &inside.to_string_lossy()));
            }
            let relative: std::path::PathBuf =
                inside.components().filter(|c| matches!(c, Component::Normal(_))).collect();
            let member = format!("{prefix}{}", relative.to_string_lossy());
            let kind = entry.header().entry_type();
            if kind.is_dir() || relative.as_os_str().is_empty() {
                continue;
            }
            let size = entry.size();
            let kind =
                Entry::of(kind.is_symlink() || kind.is_hard_link(), kind.is_file() || kind.is_contiguous(), size);
            let at = format!("{}!{member}", self.artifact);
            self.admit(&member, kind, at, depth, true, || Ok(&mut entry))?;
        }
        Ok(())
    }

    /// One member's bytes: facts, a nested archive, or evidence.
    fn member(&mut self, member: &str, origin: &str, bytes: &[u8], depth: usize, in_tar: bool) -> Result<()> {
        let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
        match Kind::of(head) {
            kind @ (Kind::Zip | Kind::Gzip | Kind::Tar) => {
                if depth > 0 {
                    self.skip(member, "an archive inside an archive inside the artifact: not opened");
                    return Ok(());
                }
                return self.archive(kind, Cursor::new(bytes), &format!("{member}!"), depth + 1);
            }
            Kind::Binary => {
                self.skip(member, "neither text nor a known archive");
                return Ok(());
            }
            Kind::Text => {}
        }
        match plan(member, in_tar) {
            Plan::Skip(reason) => self.skip(member, reason),
            Plan::Facts => {
                let meta = meta_env(bytes, origin)?;
                let mut facts = meta;
                facts.from = vec![member.to_string()];
                // meta_env.json states what the name abbreviates: it wins.
                let named = std::mem::take(&mut self.facts);
                facts.merge(named);
                self.facts = facts;
            }
            Plan::Read if !self.reading => {}
            Plan::Read => {
                let format = self.options.format.unwrap_or_else(|| InputFormat::detect(head));
                if format == InputFormat::Log && !super::logs::mentions_acceptance(bytes) {
                    self.skip(member, "no acceptance lines (vLLM SpecDecoding metrics, SGLang Decode batch, ATOM MTP Stats, llama.cpp)");
                    return Ok(());
                }
                let evidence = super::read(bytes, origin, self.options)?;
                self.read.push(ReadMember {
                    path: member.to_string(),
                    role: role_of(member),
                    format,
                    sources: evidence.len(),
                });
                self.evidence.extend(evidence);
            }
        }
        Ok(())
    }
}

fn escape(origin: &str, member: &str) -> Error {
    Error::parse(
        origin,
        None,
        format!("member '{member}' names a path outside the archive (absolute or '..'): refused"),
    )
}

/// A reader that fails past its budget: what an archive expands to is bounded before it is held.
struct Budget<'a> {
    inner: Box<dyn Read + 'a>,
    left: u64,
}

impl Read for Budget<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other(format!("the archive expands past the {} GiB artifact limit", ARTIFACT_LIMIT >> 30))
        })?;
        Ok(n)
    }
}

/// What a folder's or archive's entry is, for `Walk::admit`: only regular files are read.
enum Entry {
    Link,
    Special,
    Regular { size: u64 },
}

impl Entry {
    fn of(link: bool, regular: bool, size: u64) -> Entry {
        if link {
            Entry::Link
        } else if regular {
            Entry::Regular { size }
        } else {
            Entry::Special
        }
    }
}

/// What a member's path says to do with it, before its bytes are looked at. `in_tar`: it lies in a
/// multi-node log tarball, where only decode (or aggregated) workers' logs are read.
fn plan(member: &str, in_tar: bool) -> Plan {
    let file = member.rsplit(['/', '!']).next().unwrap_or(member).to_ascii_lowercase();
    let archive = [".zip", ".tar", ".tar.gz", ".tgz"].iter().any(|end| file.ends_with(end));
    if archive {
        return Plan::Read;
    }
    if file == "meta_env.json" {
        return Plan::Facts;
    }
    if file == "server_metrics_export.json" {
        return Plan::Read;
    }
    if file.ends_with(".json") || file.ends_with(".jsonl") {
        return Plan::Skip(if file.starts_with("results") {
            "eval scores, not acceptance"
        } else if file.starts_with("sample") || file.starts_with("predictions") || file.starts_with("agent_preds") {
            "eval samples, not acceptance"
        } else if file.ends_with("_config.json") {
            "a server-side configuration file, not acceptance"
        } else if file.starts_with("profile_export") {
            "AIPerf request records: no server acceptance counts"
        } else {
            "JSON other than an AIPerf server_metrics_export.json or meta_env.json"
        });
    }
    let text = [".log", ".out", ".err", ".txt", ".prom", ".metrics"].iter().any(|end| file.ends_with(end))
        || !file.contains('.');
    if !text {
        return Plan::Skip(if file.ends_with(".csv") {
            "a table (GPU metrics), not acceptance"
        } else {
            "not a log, a metrics scrape or an AIPerf export"
        });
    }
    match role_of(member) {
        Some(WorkerRole::Prefill) => {
            Plan::Skip("a prefill worker's log: a pin is judged by the decode role's acceptance")
        }
        None if in_tar => {
            Plan::Skip("names no worker role: in a multi-node tarball only decode workers' logs are read")
        }
        _ => Plan::Read,
    }
}

/// The role a log's file name states: a word `prefill` (`prefill0`) or `ctx`, `decode` or `gen`, `agg`.
pub fn role_of(member: &str) -> Option<WorkerRole> {
    let file = member.rsplit(['/', '!']).next().unwrap_or(member).to_ascii_lowercase();
    file.split(|c: char| !c.is_ascii_alphanumeric()).find_map(|word| {
        let stem = word.trim_end_matches(|c: char| c.is_ascii_digit());
        match stem {
            "prefill" | "ctx" => Some(WorkerRole::Prefill),
            "decode" | "gen" => Some(WorkerRole::Decode),
            "agg" => Some(WorkerRole::Aggregated),
            _ => None,
        }
    })
}

/// The upload names of `.github/workflows/benchmark-tmpl.yml` and `benchmark-multinode-tmpl.yml`, longest
/// first: each is followed by the run's `RESULT_FILENAME` (`eval_<EXP_NAME>_` too, which the name itself
/// carries again).
const ARTIFACT_PREFIXES: [&str; 6] =
    ["multinode_server_logs_", "eval_server_logs_", "server_logs_", "agentic_", "eval_", "bmk_"];

/// The facts an artifact's own name states: `<upload name><RESULT_FILENAME>`, where `RESULT_FILENAME` is
/// `<EXP_NAME>_<PRECISION>_<FRAMEWORK>_tp<TP>-pp…-ep<EP>-dpa<DPA>_disagg-…_spec-<SPEC>_conc<CONC>_<runner>`
/// (single node) or `…_<FRAMEWORK>_prefill-tp…_decode-tp<TP>-…-ep<EP>-…_disagg-…_spec-<SPEC>_conc<A>x<B>_<runner>`
/// (multi-node), with `_recipe-<fingerprint>` after it where a recipe is fingerprinted.
pub fn facts_from_name(path: &Path) -> RunFacts {
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem =
        [".tar.gz", ".tgz", ".tar", ".zip"].iter().find_map(|end| file.strip_suffix(end)).unwrap_or(&file).to_string();
    let Some(rest) = ARTIFACT_PREFIXES.iter().find_map(|p| stem.strip_prefix(p)) else {
        return RunFacts::default();
    };
    let words: Vec<&str> = rest.split('_').collect();
    // The topology word anchors the parse: precision and framework stand before it, the experiment name
    // (which has underscores of its own) before them.
    let Some(at) = words.iter().position(|w| w.starts_with("tp") && w.contains("-pp") || w.starts_with("prefill-tp"))
    else {
        return RunFacts::default();
    };
    if at < 3 {
        return RunFacts::default();
    }
    let mut facts = RunFacts {
        from: vec!["the artifact name".into()],
        precision: Some(words[at - 2].to_string()),
        framework: Some(words[at - 1].to_string()),
        ..RunFacts::default()
    };
    // An `eval_<EXP_NAME>_` upload repeats the experiment name before RESULT_FILENAME, which starts with it.
    let experiment = &words[..at - 2];
    let half = experiment.len() / 2;
    let experiment = if experiment.len().is_multiple_of(2) && half > 0 && experiment[..half] == experiment[half..] {
        &experiment[half..]
    } else {
        experiment
    };
    facts.model_prefix = experiment.first().map(|s| s.to_string());
    if let Some(seq) = experiment.get(1) {
        (facts.isl, facts.osl) = sequence_lengths(seq);
    }
    // utils/matrix_logic/generate_sweep_configs.py: fixed-seq-len experiments are `<model>_<isl><osl>`,
    // agentic ones name a concurrency and the KV offload (`…_conc4_kvnone…`, `…_conc8x16kvnone`).
    let agentic = experiment.iter().any(|w| w.starts_with("conc") || w.starts_with("kv"));
    facts.scenario =
        if facts.isl.is_some() { Some("fixed-seq-len".into()) } else { agentic.then(|| "agentic-coding".into()) };
    let topology = |word: &str, tp: &mut Option<u64>, ep: &mut Option<u64>| {
        for part in word.split('-') {
            if let Some(n) = part.strip_prefix("tp").and_then(|n| n.parse().ok()) {
                *tp = Some(n);
            } else if let Some(n) = part.strip_prefix("ep").and_then(|n| n.parse().ok()) {
                *ep = Some(n);
            }
        }
    };
    let mut runner_from = None;
    for (i, word) in words.iter().enumerate().skip(at) {
        if let Some(decode) = word.strip_prefix("decode-") {
            topology(decode, &mut facts.tp, &mut facts.ep);
            facts.multinode = Some(true);
        } else if word.starts_with("prefill-") {
            facts.multinode = Some(true);
        } else if i == at {
            topology(word, &mut facts.tp, &mut facts.ep);
            facts.multinode = Some(false);
        } else if let Some(spec) = word.strip_prefix("spec-") {
            facts.spec_decoding = Some(spec.to_string());
        } else if let Some(conc) = word.strip_prefix("conc") {
            facts.conc = conc.split('x').filter_map(|c| c.parse().ok()).collect();
            runner_from = Some(i + 1);
        }
    }
    if let Some(start) = runner_from {
        let runner: Vec<&str> =
            words[start.min(words.len())..].iter().copied().take_while(|w| !w.starts_with("recipe-")).collect();
        facts.runner = (!runner.is_empty()).then(|| runner.join("_"));
    }
    facts.result_filename = Some(words[at - 2 - experiment.len()..].join("_"));
    facts
}

/// `1k1k`, `8k1k`, or `1024_1024` written `isl_osl` (utils/matrix_logic's `seq_len_to_str`).
fn sequence_lengths(word: &str) -> (Option<u64>, Option<u64>) {
    let kilo = |s: &str| s.parse::<u64>().ok().map(|n| n * 1024);
    let parts: Vec<&str> = word.split('k').collect();
    match parts.as_slice() {
        [a, b, ""] => (kilo(a), kilo(b)),
        _ => (None, None),
    }
}

/// The facts `meta_env.json` states (benchmarks/benchmark_lib.sh `_write_lm_eval_meta_json`): for a
/// multi-node run the decode workers' parallelism.
fn meta_env(bytes: &[u8], origin: &str) -> Result<RunFacts> {
    if bytes.len() > META_LIMIT {
        return Err(Error::parse(origin, None, format!("larger than {} KiB: not a meta_env.json", META_LIMIT >> 10)));
    }
    let doc: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Error::parse(origin, Some(e.line()), format!("not JSON: {e}")))?;
    let object = doc.as_object().ok_or_else(|| Error::parse(origin, None, "not a JSON object"))?;
    let text = |key: &str| {
        object
            .get(key)
            .and_then(|v| v.as_str().map(str::to_string).or_else(|| v.as_u64().map(|n| n.to_string())))
            .filter(|s| !s.is_empty() && s != "unknown")
    };
    let number = |key: &str| text(key).and_then(|s| s.parse::<u64>().ok());
    let multinode = object.get("is_multinode").and_then(serde_json::Value::as_bool);
    let decode = multinode == Some(true);
    let conc = match object.get("eval_concs").and_then(serde_json::Value::as_array) {
        Some(list) => list.iter().filter_map(serde_json::Value::as_u64).collect(),
        None => number("conc").into_iter().collect(),
    };
    Ok(RunFacts {
        from: Vec::new(),
        result_filename: None,
        model_prefix: text("infmax_model_prefix"),
        precision: text("precision"),
        framework: text("framework"),
        spec_decoding: text("spec_decoding"),
        scenario: None,
        isl: number("isl").filter(|n| *n > 0),
        osl: number("osl").filter(|n| *n > 0),
        tp: if decode { number("decode_tp") } else { number("tp") },
        ep: if decode { number("decode_ep") } else { number("ep") },
        conc,
        runner: text("hw"),
        multinode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_words_of_the_file_name() {
        assert_eq!(role_of("logs/gb200-n1_decode_w0.out"), Some(WorkerRole::Decode));
        assert_eq!(role_of("x.tar.gz!./prefill_host-3.log"), Some(WorkerRole::Prefill));
        assert_eq!(role_of("prefill0_host.log"), Some(WorkerRole::Prefill));
        assert_eq!(role_of("server.log"), None);
        // A word must be the role, not contain it.
        assert_eq!(role_of("decoder_notes.log"), None);
    }

    #[test]
    fn the_name_states_the_run() {
        let f = facts_from_name(Path::new(
            "eval_server_logs_dsr1_1k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc64_h200-nb_3.zip",
        ));
        assert_eq!(f.model_prefix.as_deref(), Some("dsr1"));
        assert_eq!((f.isl, f.osl), (Some(1024), Some(1024)));
        assert_eq!((f.precision.as_deref(), f.framework.as_deref()), (Some("fp8"), Some("sglang")));
        assert_eq!((f.tp, f.ep, f.conc.as_slice()), (Some(8), Some(1), &[64][..]));
        assert_eq!((f.spec_decoding.as_deref(), f.runner.as_deref()), (Some("mtp"), Some("h200-nb_3")));
        assert_eq!((f.multinode, f.scenario.as_deref()), (Some(false), Some("fixed-seq-len")));
        let a = facts_from_name(Path::new(
            "agentic_dsv4_tp8_conc4_kvnone_spec-mtp_fp4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc4_b200_0",
        ));
        assert_eq!((a.scenario.as_deref(), a.isl, a.tp), (Some("agentic-coding"), None, Some(8)));

        let m = facts_from_name(Path::new(
            "multinode_server_logs_dsr1_8k1k_fp4_dynamo-trt_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc90x66_b200-multinode_0_recipe-0123456789abcdef",
        ));
        assert_eq!((m.tp, m.ep, m.conc.as_slice()), (Some(8), Some(8), &[90, 66][..]));
        assert_eq!((m.framework.as_deref(), m.multinode), (Some("dynamo-trt"), Some(true)));
        assert_eq!(m.runner.as_deref(), Some("b200-multinode_0"));

        // eval_<EXP_NAME>_<RESULT_FILENAME> repeats the experiment name.
        let e = facts_from_name(Path::new(
            "eval_dsr1_1k1k_dsr1_1k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc64_h200-nb_3",
        ));
        assert_eq!((e.model_prefix.as_deref(), e.isl), (Some("dsr1"), Some(1024)));
        assert!(facts_from_name(Path::new("server.log")).words().is_empty());
    }

    #[test]
    fn text_binary_and_archives_by_their_first_bytes() {
        assert_eq!(Kind::of(b"PK\x03\x04rest"), Kind::Zip);
        assert_eq!(Kind::of(&[0x1f, 0x8b, 8, 0]), Kind::Gzip);
        assert_eq!(Kind::of("accept len: 2.8 — ".as_bytes()), Kind::Text);
        assert_eq!(Kind::of(b"\x7fELF\x02\x01\x01\x00"), Kind::Binary);
        assert_eq!(Kind::of(b"\x89PNG\r\n\x1a\n"), Kind::Binary);
        // Damage after the first line is the reader's to name by line.
        assert_eq!(Kind::of(b"vllm:spec_decode_num_drafts_total 10\n\x00\x01"), Kind::Text);
        // A head that cuts a multi-byte character is still text.
        assert_eq!(Kind::of(&"—".as_bytes()[..2]), Kind::Text);
    }
}
