//! `--shard K/N`: one process scans a deterministic share of the work, the
//! same share on any machine, so that N processes (a Kubernetes Indexed Job,
//! a CI matrix) cover a tree or a history exactly once between them.
//!
//! # Who owns what
//!
//! Every input gets a key: for a tree, the path relative to the root it was
//! reached from (`scanner scan /src/repo` and `scanner scan repo` agree on
//! `a/b.rs`); for `--history`, the blob id. The key is hashed with 64-bit
//! FNV-1a (fixed, no per-process seed: std's `RandomState` would give every
//! pod a different split) into one of [`BUCKETS`] buckets, and bucket `b`
//! belongs to shard `b % N + 1`. For a tree, that places the small files;
//! the large ones are dealt by size to the least loaded shard
//! ([`Planner`]), so the shares balance by bytes (measured in
//! `docs/scale.md`). An archive is one input: its members are scanned by
//! the shard that owns the archive.
//!
//! Inputs owned by another shard are not skips: they are in scope, just not
//! this process's; the summary does not count them. Skips the walker counts
//! before an input exists (ignored, excluded, symlinks) are counted by every
//! shard, since every shard walks the whole tree.
//!
//! # From the environment
//!
//! Without `--shard`, a Kubernetes Indexed Job pod is sharded when
//! `SCANNER_SHARDS=N` is set: its shard is `JOB_COMPLETION_INDEX + 1`
//! (the index is 0-based, shards are 1-based). `SCANNER_SHARDS` without an
//! index (or a bad value of either) is an error rather than a silent scan of
//! everything; `JOB_COMPLETION_INDEX` alone does not shard.
//!
//! # What `--stats-json` records
//!
//! [`stats_extra`] adds `shard` (`{"index": K, "count": N}`, or `null`),
//! `run` (scanner version, rule-set digest, the options that change
//! findings and their digest, the report's format, size and FNV-1a digest)
//! and, when sharded, `rules` (id → `[name, description]`, for SARIF) and
//! `version_control` (the repositories a `--history` shard read, as SARIF's
//! `versionControlProvenance` names them; `[]` otherwise): what `scanner
//! merge` checks, pairs reports with and writes (see [`crate::merge`]).

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use crate::output::Format;

/// Buckets the key space is cut into before buckets are dealt to shards.
pub const BUCKETS: u64 = 1 << 16;

/// Environment variable holding the shard count for Indexed Jobs.
pub const ENV_SHARDS: &str = "SCANNER_SHARDS";
/// Set by Kubernetes in each pod of an Indexed Job (0-based).
pub const ENV_INDEX: &str = "JOB_COMPLETION_INDEX";

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// 64-bit FNV-1a: fixed, tiny, and the same on every machine and build.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.update(bytes);
    h.0
}

/// Incremental [`fnv1a64`].
#[derive(Clone, Copy, Debug)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl Shard {
    /// Shard `index` of `count` when 1 <= index <= count <= [`BUCKETS`]: a
    /// shard past the buckets would own no small file, and each shard keeps
    /// a load per shard ([`Planner`]).
    pub fn new(index: u64, count: u64) -> Option<Shard> {
        if index == 0 || index > count || count > BUCKETS {
            return None;
        }
        Some(Shard {
            index: u32::try_from(index).ok()?,
            count: u32::try_from(count).ok()?,
        })
    }

    /// Parses `K/N` with 1 <= K <= N <= 65536 (the `--shard` value parser).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!("`{s}` is not a shard: expected K/N with 1 <= K <= N <= {BUCKETS}, e.g. 2/8")
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(index, count).ok_or_else(bad)
    }

    /// `--shard` if given, else `SCANNER_SHARDS` with `JOB_COMPLETION_INDEX`
    /// (see the module docs).
    pub fn resolve(flag: Option<Shard>) -> anyhow::Result<Option<Shard>> {
        if flag.is_some() {
            return Ok(flag);
        }
        Shard::from_env(
            std::env::var(ENV_SHARDS).ok().as_deref(),
            std::env::var(ENV_INDEX).ok().as_deref(),
        )
    }

    fn from_env(shards: Option<&str>, index: Option<&str>) -> anyhow::Result<Option<Shard>> {
        let Some(shards) = shards.filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let count: u32 = shards
            .trim()
            .parse()
            .ok()
            .filter(|&n| Shard::new(1, u64::from(n)).is_some())
            .ok_or_else(|| {
                anyhow::anyhow!("{ENV_SHARDS}={shards}: not a shard count (1 to {BUCKETS})")
            })?;
        let Some(index) = index.filter(|s| !s.is_empty()) else {
            anyhow::bail!("{ENV_SHARDS}={shards} without {ENV_INDEX}: which shard is this? (or use --shard K/N)");
        };
        let i: u32 = index
            .trim()
            .parse()
            .ok()
            .filter(|&i| i < count)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{ENV_INDEX}={index}: not an index below {ENV_SHARDS}={count} (0-based)"
                )
            })?;
        Ok(Some(Shard {
            index: i + 1,
            count,
        }))
    }

    /// True when this shard owns the input with key `key`.
    pub fn owns_key(&self, key: &[u8]) -> bool {
        let bucket = fnv1a64(key) % BUCKETS;
        bucket % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// True when this shard owns the file at `path`, reached from one of
    /// `roots` (the key is the path relative to that root).
    pub fn owns_path(&self, path: &Path, roots: &[PathBuf]) -> bool {
        self.owns_key(&path_key(path, roots))
    }
}

/// Files larger than this are placed by size (see [`Planner`]); smaller
/// ones by the hash of their key.
pub const LARGE: u64 = 64 << 10;

/// Decides which of a tree's files this shard scans, balanced by bytes.
///
/// Hashing alone balances file counts, not bytes: a real tree has a few
/// files of megabytes (generated tables, vendored bundles), and with 16
/// shards one of them is most of a shard's share. So every shard walks the
/// whole tree and stats each file: a file of at most [`LARGE`] bytes goes
/// to its hash bucket's shard and adds its size to that shard's load; the
/// larger ones are then dealt largest first (ties by key) to the least
/// loaded shard (ties to the lowest index), which evens out what the hash
/// left uneven. A large file with a NUL byte in its first 8 KiB weighs
/// 8 KiB (unless `--binary`): it is skipped as binary after that read.
/// Every shard computes the same plan from the same tree, so shards must
/// see the same files with the same sizes (one checkout, one commit).
pub struct Planner {
    shard: Shard,
    roots: Vec<PathBuf>,
    binary: bool,
    loads: Vec<u64>,
    large: Vec<(u64, Vec<u8>, crate::input::Item)>,
    owned: Vec<crate::input::Item>,
}

impl Planner {
    pub fn new(shard: Shard, roots: &[PathBuf], binary: bool) -> Planner {
        Planner {
            shard,
            roots: roots.to_vec(),
            binary,
            loads: vec![0; shard.count as usize],
            large: Vec::new(),
            owned: Vec::new(),
        }
    }

    fn owner(&self, key: &[u8]) -> usize {
        ((fnv1a64(key) % BUCKETS) % u64::from(self.shard.count)) as usize
    }

    /// One item of the walk.
    pub fn offer(&mut self, item: crate::input::Item) {
        let key = path_key(&item.provenance.path, &self.roots);
        let on_disk = match &item.content {
            crate::input::Content::File(p) => Some(p.as_path()),
            crate::input::Content::WalkedFile { .. } => Some(item.provenance.path.as_path()),
            _ => None,
        };
        // An unreadable file is placed by hash: its shard reports it.
        let size = on_disk.map_or(0, |p| std::fs::metadata(p).map_or(0, |m| m.len()));
        if size > LARGE {
            let weight = match on_disk {
                Some(p) if !self.binary && looks_binary(p) => 8 << 10,
                _ => size,
            };
            self.large.push((weight, key, item));
            return;
        }
        let owner = self.owner(&key);
        self.loads[owner] += size;
        if owner == self.shard.index as usize - 1 {
            self.owned.push(item);
        }
    }

    /// This shard's items: its large files first (they take longest), then
    /// the rest in walk order.
    pub fn finish(mut self) -> Vec<crate::input::Item> {
        self.large
            .sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let me = self.shard.index as usize - 1;
        let mut mine = Vec::new();
        for (weight, _, item) in self.large {
            let (least, _) = self
                .loads
                .iter()
                .enumerate()
                .min_by_key(|&(i, load)| (*load, i))
                .expect("at least one shard");
            self.loads[least] += weight;
            if least == me {
                mine.push(item);
            }
        }
        mine.extend(self.owned);
        mine
    }
}

/// A NUL byte in the first 8 KiB, as the workers decide (an unreadable file
/// is not binary: its shard reports it).
fn looks_binary(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 8 << 10];
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut n = 0;
    let mut f = f.take(buf.len() as u64);
    while let Ok(k) = f.read(&mut buf[n..]) {
        if k == 0 {
            break;
        }
        n += k;
    }
    memchr::memchr(0, &buf[..n]).is_some()
}

/// The shard key of a path: relative to the root it is under (`./` and the
/// root itself dropped), `/`-separated; the path as is when no root is a
/// prefix (a file named as a root, standard input).
pub fn path_key(path: &Path, roots: &[PathBuf]) -> Vec<u8> {
    let norm = |p: &Path| -> Vec<PathBuf> {
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect()
    };
    let parts = norm(path);
    let mut rel: &[PathBuf] = &parts;
    for root in roots {
        let r = norm(root);
        if !r.is_empty() && parts.len() > r.len() && parts.starts_with(&r) {
            rel = &parts[r.len()..];
            break;
        }
    }
    let mut key = Vec::new();
    for (i, c) in rel.iter().enumerate() {
        if i > 0 {
            key.push(b'/');
        }
        // The root directory's own `/` comes from the separator after it.
        if c.as_os_str() != "/" {
            key.extend_from_slice(c.as_os_str().as_encoded_bytes());
        }
    }
    key
}

/// Size and FNV-1a digest of the report as written, so that `scanner merge`
/// can tell which report a stats file describes.
#[derive(Clone, Default)]
pub struct ReportDigest(Arc<Mutex<(u64, Fnv)>>);

impl ReportDigest {
    /// `out`, hashing every byte that goes through.
    pub fn wrap(&self, out: Box<dyn Write + Send>) -> Box<dyn Write + Send> {
        Box::new(Hashing {
            inner: out,
            digest: self.clone(),
        })
    }

    pub fn get(&self) -> (u64, u64) {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (g.0, g.1 .0)
    }
}

struct Hashing {
    inner: Box<dyn Write + Send>,
    digest: ReportDigest,
}

impl Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let mut g = self.digest.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += n as u64;
        g.1.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Digest of the compiled rule set as the engine describes it (ids,
/// aliases, names, descriptions, keywords, origins), with the version.
pub fn rules_digest(rules: &[scanner_engine::RuleInfo]) -> String {
    let mut h = Fnv::default();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for r in rules {
        for field in [&*r.id, &*r.name, &r.description, &r.origin] {
            h.update(field.as_bytes());
            h.update(&[0]);
        }
        for s in r.aliases.iter().chain(&r.keywords) {
            h.update(s.as_bytes());
            h.update(&[1]);
        }
        h.update(&[2]);
    }
    format!("{:016x}", h.0)
}

/// The keys `--stats-json` gains for `scanner merge` (module docs).
pub fn stats_extra(
    shard: Option<Shard>,
    options: Value,
    format: Format,
    rules: &[scanner_engine::RuleInfo],
    version_control: &[crate::input::VersionControl],
    report: &ReportDigest,
) -> Map<String, Value> {
    let (bytes, digest) = report.get();
    let mut m = Map::new();
    m.insert(
        "shard".into(),
        shard.map_or(Value::Null, |s| json!({"index": s.index, "count": s.count})),
    );
    m.insert(
        "run".into(),
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "rules_digest": rules_digest(rules),
            "options_digest": format!("{:016x}", fnv1a64(options.to_string().as_bytes())),
            "options": options,
            "report": {
                "format": format_name(format),
                "bytes": bytes,
                "fnv1a64": format!("{digest:016x}"),
            },
        }),
    );
    if shard.is_some() {
        let rules: Map<String, Value> = rules
            .iter()
            .map(|r| (r.id.to_string(), json!([&*r.name, r.description])))
            .collect();
        m.insert("rules".into(), Value::Object(rules));
        m.insert("version_control".into(), json!(version_control));
    }
    m
}

pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Text => "text",
        Format::Json => "json",
        Format::Jsonl => "jsonl",
        Format::Sarif => "sarif",
        Format::Html => "html",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_k_of_n_and_refuses_the_rest() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(Shard::parse("1/1"), Ok(Shard { index: 1, count: 1 }));
        for bad in ["3/2", "0/0", "0/4", "a/b", "3", "1/", "/2", "-1/2", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn environment_index_is_zero_based() {
        assert_eq!(Shard::from_env(None, Some("3")).unwrap(), None);
        assert_eq!(
            Shard::from_env(Some("4"), Some("0")).unwrap(),
            Some(Shard { index: 1, count: 4 })
        );
        assert_eq!(
            Shard::from_env(Some("4"), Some("3")).unwrap(),
            Some(Shard { index: 4, count: 4 })
        );
        assert!(Shard::from_env(Some("4"), Some("4")).is_err());
        assert!(Shard::from_env(Some("4"), None).is_err());
        assert!(Shard::from_env(Some("0"), Some("0")).is_err());
        assert!(Shard::from_env(Some("x"), Some("0")).is_err());
    }

    #[test]
    fn fnv_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn keys_are_relative_to_the_root() {
        let roots = [PathBuf::from("/srv/repo"), PathBuf::from(".")];
        assert_eq!(path_key(Path::new("/srv/repo/a/b.rs"), &roots), b"a/b.rs");
        assert_eq!(path_key(Path::new("./a/b.rs"), &roots), b"a/b.rs");
        assert_eq!(path_key(Path::new("a/b.rs"), &roots), b"a/b.rs");
        assert_eq!(path_key(Path::new("/srv/repo"), &roots[..1]), b"/srv/repo");
    }

    #[test]
    fn every_key_has_exactly_one_owner() {
        for n in [1, 2, 3, 7, 16] {
            for i in 0..200u32 {
                let key = format!("dir{}/file{i}.txt", i % 7);
                let owners = (1..=n)
                    .filter(|&k| Shard { index: k, count: n }.owns_key(key.as_bytes()))
                    .count();
                assert_eq!(owners, 1, "{key} with {n} shards");
            }
        }
    }
}
