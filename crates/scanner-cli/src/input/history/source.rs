//! The history source: the blobs of one or more repositories' histories,
//! emitted in batches that keep delta chains together ([`BlobGroups`]).

use std::path::PathBuf;
use std::sync::Arc;

use super::{BlobGroups, HistoryError, HistoryStats, OidMap};
use crate::input::emit::{Emit, Key};
use crate::input::skip::Skip;
use crate::input::{Content, HistoryRepo, Item, Provenance};

/// Walks each repository of `repos` in turn and emits every blob this scan
/// owns into `out`; returns the repositories' counts together. One
/// repository of several failing is a warning (exit 2) and the others are
/// still scanned; a single repository failing is the error returned.
pub fn emit_repos(
    repos: Vec<HistoryRepo>,
    out: &mut dyn Emit,
) -> Result<HistoryStats, HistoryError> {
    let mut total = HistoryStats::default();
    let mut repos = repos.into_iter().peekable();
    while let Some(repo) = repos.next() {
        if out.stopped() {
            break;
        }
        // The next one is fetched (cloned) while this one is scanned.
        if let Some(next) = repos.peek_mut() {
            next.fetch_early();
        }
        let prefixed = repo.prefix.is_some();
        let name = repo.name.clone();
        match emit_repo(repo, out) {
            Ok(stats) => total.add(&stats),
            // Stopped while fetching: nothing to warn about, the run ends.
            Err(_) if out.stopped() => break,
            // Named once, as the user knows it (a remote by its URL, not its clone's
            // directory).
            Err(e) if prefixed => out.warn(name, e.reason(), true),
            Err(e) => return Err(e),
        }
    }
    Ok(total)
}

fn emit_repo(repo: HistoryRepo, out: &mut dyn Emit) -> Result<HistoryStats, HistoryError> {
    let (prefix, name, store) = (
        repo.prefix.clone(),
        repo.name.clone(),
        Arc::clone(&repo.store),
    );
    let mut groups = BlobGroups::new(out.workers());
    let mut started = repo.start();
    // The blobs refs name without a commit (every ref's history only; read before the walk,
    // so that one it yields is left to it: scanned once, at its commit), and those of them
    // the walk yielded.
    let mut by_ref = match &mut started {
        Ok(s) => s.ref_blobs()?,
        Err(_) => Vec::new(),
    };
    let wanted: OidMap<()> = by_ref.iter().map(|b| (b.oid, ())).collect();
    let mut walked = OidMap::<()>::default();
    // The walk lists a blob once, at the first path it meets it: at a path out of scope it
    // is not taken as seen (`Introducer::change`), so that it is still listed at a path in
    // scope after (a file moved out of an excluded directory).
    // From the repository's root, as [`Provenance::scope_path`] gives it.
    let in_scope: Option<super::InScope> = out.scope().cloned().map(|scope| {
        Arc::new(move |path: &[u8]| {
            scope
                .check_listed(&blob_path(&None, path.to_vec()))
                .is_none()
        }) as super::InScope
    });
    let stats = started.and_then(|s| {
        super::walk(s, in_scope, |blob| {
            if wanted.contains_key(&blob.oid) {
                walked.insert(blob.oid, ());
            }
            let provenance = Provenance {
                path: blob_path(&prefix, blob.path),
                commit: Some(blob.commit),
                lead: lead(&prefix),
            };
            // By blob id: a blob is listed once, whatever its paths.
            if !out.admits(&provenance.scope_path(), Key::Blob(&blob.oid.0)) {
                return !out.stopped();
            }
            let item = Item {
                provenance,
                content: Content::GitBlob {
                    repo: Arc::clone(&store),
                    oid: blob.oid,
                    size: blob.size,
                    base: blob.base,
                },
            };
            groups.push(item, blob.chain, |batch| out.send_batch(batch))
        })
    });
    let stats = stats.map(|mut stats| {
        if stats.stopped || out.stopped() {
            return stats;
        }
        // Each once (two refs may name one blob).
        by_ref.retain(|b| walked.insert(b.oid, ()).is_none());
        for blob in by_ref {
            let provenance = Provenance {
                path: blob_path(&prefix, blob.path),
                commit: None,
                lead: lead(&prefix),
            };
            if !out.admits(&provenance.scope_path(), Key::Blob(&blob.oid.0)) {
                continue;
            }
            stats.blobs += 1;
            stats.blob_bytes += blob.size;
            let item = Item {
                provenance,
                content: Content::GitBlob {
                    repo: Arc::clone(&store),
                    oid: blob.oid,
                    size: blob.size,
                    base: None,
                },
            };
            if !groups.push(item, None, |batch| out.send_batch(batch)) {
                break;
            }
        }
        stats
    });
    groups.finish(|batch| out.send_batch(batch));
    let stats = stats?;
    out.skip(Skip::Submodule, stats.submodules);
    for broken in &stats.broken_refs {
        out.warn(
            name.clone(),
            format!(
                "ref `{broken}` names an object the repository does not have: left out, \
                 every other ref's history scanned ({})",
                super::error::repair_ref(broken)
            ),
            true,
        );
    }
    for (parent, child) in &stats.cut_parents {
        out.warn(
            name.clone(),
            format!(
                "commit {parent}, a parent of {child}, is missing or corrupt: the history \
                 behind it is not scanned (`git fsck` names what is damaged)"
            ),
            true,
        );
    }
    if let Some(first) = &stats.first_unlisted {
        out.warn(
            // The reason names the repository.
            PathBuf::new(),
            format!(
                "{first}; {} commit(s) could not be listed whole: the blobs only they hold \
                 are not scanned",
                stats.unlisted
            ),
            true,
        );
    }
    Ok(stats)
}

/// How many bytes of a [`blob_path`] the repository's name takes, with its `/`: path rules
/// see what follows ([`Provenance::lead`]).
fn lead(prefix: &Option<PathBuf>) -> usize {
    prefix.as_ref().map_or(0, |name| {
        let name = name.to_string_lossy();
        name.len() + usize::from(!name.ends_with('/'))
    })
}

/// A blob's path as the scan names it: the tree's path, led by the repository's name when
/// several are scanned.
fn blob_path(prefix: &Option<PathBuf>, path: Vec<u8>) -> PathBuf {
    let path = crate::paths::path_from_bytes(path);
    match prefix {
        Some(name) => name.join(path),
        None => path,
    }
}
