//! The commit walk: `git rev-list`, the in-process tree diff, the blobs yielded once.

use super::*;

/// A path's 64-bit hash, stable within a run (SipHash with fixed keys). Two paths that
/// collide would only let a version be compared with a blob first seen at the other path.
pub(super) fn hash_path(path: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(path);
    h.finish()
}

pub(super) const LIST: &str = "git rev-list";

/// How many blobs the parser may find before the caller takes them: the back-pressure that
/// keeps the walk's memory bounded (a path and a reference to the commit each).
pub(super) const PARSED_AHEAD: usize = 4096;

/// What the parser thread (and, split, the diff threads) send the caller's.
pub(super) enum Msg {
    /// A new blob, for the caller to size (the walk on one thread).
    Blob(HistoryBlob),
    /// One commit's changes, diffed and sized by a diff thread, for the caller to introduce
    /// in the order git listed the commits (the walk split, [`HistoryOptions::diff_threads`]).
    Diffed(Diffed),
    Done(Result<HistoryStats, HistoryError>),
}

/// When `dir` is not inside a git repository, the repositories directly in
/// it (a work tree with `.git`, or a bare repository), sorted by name;
/// `None` when `dir` is itself in a repository (scan that one).
pub fn repositories_in(dir: &Path) -> Option<Vec<PathBuf>> {
    let is_repo = |p: &Path| {
        p.join(".git").exists()
            || (p.join("HEAD").is_file() && p.join("objects").is_dir() && p.join("refs").is_dir())
    };
    // A repository's own directory (its work tree, or a bare one) is that repository: git
    // is asked only of another directory, which may lie inside one. (Each question is a
    // process, 1.5 ms, that the rules' compiling waits for.)
    if is_repo(dir) {
        return None;
    }
    let inside = git(dir)
        .args(["rev-parse", "--git-dir"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if inside || !dir.is_dir() {
        return None;
    }
    let mut repos: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && is_repo(p))
        .collect();
    repos.sort();
    Some(repos)
}

/// Streams every distinct blob reachable from the selected history once, attributed to the
/// earliest commit (in topological order) that introduced it, with the path it had there.
/// `on_blob` returns false to stop early ([`HistoryStats::stopped`]). See the module doc for
/// the protocol.
pub fn enumerate(
    opts: &HistoryOptions,
    on_blob: impl FnMut(HistoryBlob) -> bool,
) -> Result<HistoryStats, HistoryError> {
    walk(
        start(opts, &Arc::new(ObjectStore::new(&opts.repo)))?,
        None,
        on_blob,
    )
}

/// An [`enumerate`] whose commits are being listed but not read yet.
///
/// Listing orders every selected commit before the first one is known (`git rev-list
/// --reverse --topo-order` took about 40 ms on ripgrep's 4,528 commits); started before the
/// rules are compiled (about 17 ms), the two overlap. Dropped without [`walk`], a listing
/// in-process ends once done, and a `git rev-list` sees its pipes close and exits.
pub struct Started {
    repo: PathBuf,
    store: Arc<ObjectStore>,
    pub(super) listing: Listing,
    chains: bool,
    diff_threads: usize,
    /// Every ref's history (no named revisions, no date): the blobs refs name without a
    /// commit ([`ref_blobs`]), being read on a thread of their own, so that they overlap
    /// what the listing overlaps.
    ref_blobs: Option<thread::JoinHandle<Result<Vec<RefBlob>, HistoryError>>>,
}

impl Started {
    /// The blobs refs name without a commit, once read ([`Started::ref_blobs`]); none where
    /// named revisions or a date select the commits.
    pub fn ref_blobs(&mut self) -> Result<Vec<RefBlob>, HistoryError> {
        match self.ref_blobs.take() {
            Some(reading) => reading
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => Ok(Vec::new()),
        }
    }
}

/// How the commits are being listed.
pub(super) enum Listing {
    /// By `git rev-list`, running.
    Git(Running),
    /// In-process (`order.rs`); should that give up, by this `git rev-list`, not started.
    InProcess(super::order::Listing, Command),
}

/// The options that make `git rev-list` write what [`List`] reads: the fields of
/// [`CommitInfo`] and the tree, each ended by a NUL, whatever the user's configuration.
/// The date raw, shown by [`date`](super::format::date): git dies on some with `%aI`.
pub(super) const FORMAT_ARGS: [&str; 6] = [
    "--no-color",
    "--no-show-signature",
    "--no-notes",
    "--encoding=UTF-8",
    "--date=raw",
    "--format=%T%x00%an%x00%ae%x00%ad%x00%s%x00",
];

/// The first half of [`enumerate`]: lists the stash entries, then starts listing the
/// commits: in-process with [`HistoryOptions::list_threads`] (`order.rs`), else with `git
/// rev-list`. Commits, trees and the blobs' sizes are read from `store`.
pub fn start(opts: &HistoryOptions, store: &Arc<ObjectStore>) -> Result<Started, HistoryError> {
    let repo = opts.repo.as_path();
    let stash = if opts.revs.is_empty() {
        stash_entries(repo)?
    } else {
        Vec::new()
    };

    // The selection: which commits.
    let select = |cmd: &mut Command| {
        if let Some(since) = &opts.since {
            cmd.arg(format!("--since={since}"));
        }
        if opts.reflogs {
            cmd.arg("--reflog");
        }
        if opts.revs.is_empty() {
            cmd.arg("--all");
        }
        cmd.arg("--end-of-options");
        cmd.args(&opts.revs).args(&stash).arg("--");
    };
    let mut list = git(repo);
    list.args(["rev-list", "--reverse", "--topo-order", "--parents"])
        .args(FORMAT_ARGS);
    select(&mut list);
    // Named revisions and `--since` stay with git (`order.rs`, "When git lists them").
    let listing = if opts.list_threads > 0 && opts.revs.is_empty() && opts.since.is_none() {
        let mut tips = git(repo);
        tips.args(["rev-list", "--no-walk=unsorted"]);
        select(&mut tips);
        let tips = super::order::Tips {
            git: tips,
            stash: (!opts.reflogs).then(|| stash.clone()),
        };
        let listing = super::order::spawn(repo, store, tips, opts.list_threads);
        Listing::InProcess(listing, list)
    } else {
        Listing::Git(Running::spawn(repo, list, LIST)?)
    };
    let ref_blobs = (opts.revs.is_empty() && opts.since.is_none()).then(|| {
        let (repo, store) = (repo.to_path_buf(), Arc::clone(store));
        thread::spawn(move || ref_blobs(&repo, &store))
    });
    Ok(Started {
        repo: repo.to_path_buf(),
        store: Arc::clone(store),
        listing,
        chains: opts.chains,
        diff_threads: opts.diff_threads,
        ref_blobs,
    })
}

/// The second half of [`enumerate`]: reads the walk to its end.
///
/// On one parser thread (the default) the parser diffs each commit and decides which blobs
/// are new, and this thread sizes them. Split ([`HistoryOptions::diff_threads`]), the parser
/// only reads `git rev-list` and hands the commits out in blocks of 16; each diff
/// thread diffs its commits and sizes their blobs, and this thread puts the commits back in
/// git's order and decides which blobs are new: the same blobs, in the same order, with the
/// same paths, commits and bases as on one thread.
pub fn walk(
    started: Started,
    in_scope: Option<InScope>,
    mut on_blob: impl FnMut(HistoryBlob) -> bool,
) -> Result<HistoryStats, HistoryError> {
    let Started {
        repo,
        store,
        listing,
        chains,
        diff_threads,
        ..
    } = started;
    let repo = repo.as_path();
    let (mut list, mut commits) = commits(repo, listing)?;
    let (broken_refs, cut) = match &mut commits {
        Commits::Ordered(ordered) => (
            std::mem::take(&mut ordered.broken),
            std::mem::take(&mut ordered.cut),
        ),
        Commits::Git(_) => Default::default(),
    };
    let cut_parents: Vec<(String, String)> = cut
        .iter()
        .map(|(parent, child)| (parent.to_string(), child.to_string()))
        .collect();
    let split = diff_threads > 0;
    let ahead = if split {
        2 * BLOCK * diff_threads
    } else {
        PARSED_AHEAD
    };
    let (tx, rx) = mpsc::sync_channel::<Msg>(ahead);
    let parser_repo = repo.to_path_buf();
    // Sizes the blobs the one parser finds (`read_commits` fails if it cannot be made);
    // split, each diff thread sizes its own.
    let mut sizer = (!split).then(|| Sizer::new(&store, chains));
    let parser_introducer = Introducer::new(in_scope.clone());
    let parser = thread::spawn(move || {
        let result = read_commits(
            &parser_repo,
            &store,
            commits,
            &tx,
            diff_threads,
            chains,
            parser_introducer,
        );
        let _ = tx.send(Msg::Done(result));
    });

    let mut stopped = false;
    let mut outcome: Result<HistoryStats, HistoryError> = Ok(HistoryStats::default());
    let mut yielded = HistoryStats::default();
    let mut yield_blob = |blob: HistoryBlob| {
        yielded.blobs += 1;
        yielded.blob_bytes += blob.size;
        yielded.symlinks += u64::from(blob.symlink);
        on_blob(blob)
    };
    // Split: the commits diffed ahead of the next one in git's order, and what is new.
    let mut pending = std::collections::BTreeMap::<u64, Diffed>::new();
    let mut next = 0u64;
    let mut introducer = Introducer::new(in_scope);
    // Until the parser and every diff thread are done (the diff threads end after it).
    for msg in rx.iter() {
        let was_stopped = stopped;
        match msg {
            Msg::Blob(_) | Msg::Diffed(_) if stopped => {}
            Msg::Blob(mut blob) => {
                if let Some(sizer) = sizer.as_mut() {
                    (blob.size, blob.chain) = sizer.size(&blob.oid);
                }
                stopped = !yield_blob(blob);
            }
            Msg::Diffed(diffed) => {
                pending.insert(diffed.seq, diffed);
                while let Some(diffed) = pending.remove(&next) {
                    next += 1;
                    for blob in introducer.commit(diffed) {
                        if !yield_blob(blob) {
                            stopped = true;
                            break;
                        }
                    }
                    if stopped {
                        break;
                    }
                }
            }
            Msg::Done(result) => outcome = result,
        }
        if stopped && !was_stopped {
            // Unblocks the parser: its reads fail, it sends Done.
            if let Some(list) = list.as_mut() {
                let _ = list.child.kill();
            }
        }
    }
    if parser.join().is_err() {
        list.into_iter().for_each(Running::kill);
        return Err(HistoryError::Protocol {
            repo: repo.to_path_buf(),
            command: LIST,
            detail: "the parser thread panicked".into(),
        });
    }
    // Split, the counts are the introducer's.
    let outcome = match outcome {
        Ok(_) if split => Ok(introducer.stats),
        outcome => outcome,
    };
    if stopped {
        list.into_iter().for_each(Running::kill);
        let mut stats = outcome.unwrap_or_default();
        stats.stopped = true;
        stats.broken_refs = broken_refs;
        stats.cut_parents = cut_parents;
        merge_yielded(&mut stats, &yielded);
        return Ok(stats);
    }
    let list_result = list.map_or(Ok(()), |list| list.finish(repo));
    // git's own diagnosis (e.g. "bad revision") beats the parser's broken pipe; a git that
    // died of the parser's error (its pipe closed, nothing said) does not.
    match (list_result, &outcome) {
        (Err(HistoryError::Git { stderr, .. }), Err(_)) if stderr.is_empty() => {}
        (list_result, _) => list_result?,
    }
    let mut stats = outcome?;
    stats.broken_refs = broken_refs;
    stats.cut_parents = cut_parents;
    merge_yielded(&mut stats, &yielded);
    Ok(stats)
}

/// The commits of `listing`, and the `git rev-list` that lists them if git does.
pub(super) fn commits(
    repo: &Path,
    listing: Listing,
) -> Result<(Option<Running>, Commits), HistoryError> {
    let mut list = match listing {
        Listing::Git(list) => list,
        Listing::InProcess(listing, fallback) => match listing.join() {
            Some(ordered) => return Ok((None, Commits::Ordered(Box::new(ordered)))),
            None => Running::spawn(repo, fallback, LIST)?,
        },
    };
    let out = list.child.stdout.take().expect("piped");
    Ok((Some(list), Commits::Git(List::new(repo, out))))
}

pub(super) fn merge_yielded(stats: &mut HistoryStats, yielded: &HistoryStats) {
    stats.blobs = yielded.blobs;
    stats.blob_bytes = yielded.blob_bytes;
    stats.symlinks = yielded.symlinks;
}

/// How many commits in a row go to one diff thread: a commit's trees are mostly its
/// parent's, listed just before, and one reader's caches then hold them.
pub(super) const BLOCK: usize = 16;

/// One commit as `git rev-list` lists it.
pub(super) struct Listed {
    pub(super) id: Oid,
    pub(super) parent: Option<Oid>,
    /// A merge: what it resolved (against its first parent) is scanned whole.
    pub(super) merge: bool,
    pub(super) tree: Oid,
    pub(super) info: CommitInfo,
}

/// Where the commits come from, in git's order.
pub(super) enum Commits {
    Git(List),
    Ordered(Box<super::order::Ordered>),
}

impl Commits {
    pub(super) fn next(&mut self) -> Result<Option<Listed>, HistoryError> {
        match self {
            Commits::Git(list) => list.next(),
            Commits::Ordered(ordered) => Ok(ordered.next()),
        }
    }
}

/// `git rev-list`'s output, one commit at a time.
pub(super) struct List {
    repo: PathBuf,
    input: BufReader<ChildStdout>,
    line: Vec<u8>,
    tok: Vec<u8>,
}

impl List {
    pub(super) fn new(repo: &Path, out: ChildStdout) -> List {
        List {
            repo: repo.to_path_buf(),
            input: BufReader::with_capacity(64 * 1024, out),
            line: Vec::with_capacity(128),
            tok: Vec::with_capacity(256),
        }
    }

    /// The next commit; `None` at the end.
    pub(super) fn next(&mut self) -> Result<Option<Listed>, HistoryError> {
        let List {
            repo,
            input,
            line,
            tok,
        } = self;
        let protocol = |detail: String| HistoryError::Protocol {
            repo: repo.to_path_buf(),
            command: LIST,
            detail,
        };
        let io = |source: io::Error| HistoryError::Io {
            repo: repo.to_path_buf(),
            command: LIST,
            source,
        };
        // `commit <id> <parents>`, after the newline that ends the previous record.
        let header = loop {
            line.clear();
            if input.read_until(b'\n', line).map_err(io)? == 0 {
                return Ok(None);
            }
            if !line.trim_ascii().is_empty() {
                break line.trim_ascii();
            }
        };
        let Some(ids) = header.strip_prefix(b"commit ") else {
            return Err(protocol(format!("`{}`", String::from_utf8_lossy(header))));
        };
        let mut ids = ids.split(|&b| b == b' ');
        let mut next_id = || -> Result<Option<Oid>, HistoryError> {
            match ids.next() {
                None => Ok(None),
                Some(h) if h.len() == 64 => Err(HistoryError::UnsupportedObjectFormat {
                    repo: repo.to_path_buf(),
                }),
                Some(h) => Oid::from_hex(h)
                    .map(Some)
                    .ok_or_else(|| protocol(format!("commit id `{}`", String::from_utf8_lossy(h)))),
            }
        };
        let Some(id) = next_id()? else {
            return Err(protocol("a commit without an id".into()));
        };
        let parent = next_id()?;
        let merge = next_id()?.is_some();
        // The tree and the author's fields, each ended by a NUL (any byte may be in them).
        let mut field = || -> Result<String, HistoryError> {
            if !next_token(input, tok).map_err(io)? {
                return Err(protocol(format!("commit {id} cut short")));
            }
            Ok(String::from_utf8_lossy(tok).into_owned())
        };
        let tree = field()?;
        let tree = Oid::from_hex(tree.as_bytes())
            .ok_or_else(|| protocol(format!("tree id `{tree}` of commit {id}")))?;
        let info = CommitInfo {
            id: id.to_string(),
            author_name: field()?,
            author_email: field()?,
            author_date: super::format::date(field()?.as_bytes()),
            summary: field()?,
        };
        Ok(Some(Listed {
            id,
            parent,
            merge,
            tree,
            info,
        }))
    }
}

/// The trees of the commits listed last: parents come before their children, most of
/// them just before. A parent not here (listed long ago) is read.
#[derive(Default)]
struct ParentTrees {
    trees: OidMap<Oid>,
    object: Vec<u8>,
}

impl ParentTrees {
    /// The tree of `commit`'s first parent, then `commit`'s own remembered.
    fn take(
        &mut self,
        repo: &Path,
        reader: &mut BlobReader,
        commit: &Listed,
    ) -> Result<Option<Oid>, HistoryError> {
        let parent_tree = match commit.parent {
            None => None,
            Some(p) => Some(match self.trees.get(&p) {
                Some(&tree) => tree,
                None => read_commit_tree(reader, p, &mut self.object).map_err(|e| {
                    HistoryError::MissingObject {
                        repo: repo.to_path_buf(),
                        oid: e.oid.to_string(),
                        detail: format!("the parent of commit {}: {}", commit.id, e.source),
                    }
                })?,
            }),
        };
        if self.trees.len() == RECENT_TREES {
            self.trees.clear();
        }
        self.trees.insert(commit.id, commit.tree);
        Ok(parent_tree)
    }
}

/// Diffs `commit`'s tree against its parent's into `diff`. A tree that cannot be read (not
/// fetched in a partial clone made with `--filter=tree:...`, or corrupt) does not end the
/// walk. Against a parent's, this commit's whole tree is listed instead, as for a root (what
/// was seen before is skipped as ever); in this commit's own, what it alone holds is not
/// listed: the description returned then is counted and the first one named.
fn diff_commit(
    diff: &mut crate::input::commits::TreeDiff,
    reader: &mut BlobReader,
    parent_tree: Option<Oid>,
    commit: &Listed,
) -> Option<String> {
    let listed = diff.run(reader, parent_tree, Some(commit.tree));
    let listed = match listed {
        Err(_) if parent_tree.is_some() => diff.run(reader, None, Some(commit.tree)),
        listed => listed,
    };
    listed
        .err()
        .map(|e| format!("commit {}: {}", commit.id, e.source))
}

/// Sizes blobs from their pack entries' headers ("Sizes" in the module docs) and, with
/// [`HistoryOptions::chains`], finds where their delta chains start.
struct Sizer {
    reader: Option<BlobReader>,
    chains: bool,
}

impl Sizer {
    fn new(store: &Arc<ObjectStore>, chains: bool) -> Sizer {
        Sizer {
            reader: BlobReader::with_caches(store, 64 << 10, 0).ok(),
            chains,
        }
    }

    /// `oid`'s size and chain start. A blob that cannot be sized (missing in a partial
    /// clone, corrupt, not a blob) is yielded at size 0 all the same: the worker that reads
    /// it reports what is wrong, naming it, and every other blob is still scanned.
    fn size(&mut self, oid: &Oid) -> (u64, Option<u64>) {
        let Some(reader) = self.reader.as_mut() else {
            return (0, None);
        };
        match reader.header(oid) {
            Ok((None | Some(gix::objs::Kind::Blob), size)) => {
                (size, self.chains.then(|| reader.chain_start(oid)).flatten())
            }
            _ => (0, None),
        }
    }
}

/// A change a diff thread found, owned, with its new blob sized when it is a file or a
/// symlink.
pub(super) struct DiffedChange {
    path: Vec<u8>,
    old: Option<(u32, Oid)>,
    new: Option<(u32, Oid)>,
    size: u64,
    chain: Option<u64>,
}

/// One commit's changes, from a diff thread.
pub(super) struct Diffed {
    /// The commit's place in git's order.
    seq: u64,
    commit: Listed,
    unlisted: Option<String>,
    changes: Vec<DiffedChange>,
}

/// A blob a ref names without a commit ([`ref_blobs`]).
pub struct RefBlob {
    /// The ref's name, and under a tree the path there (`refs/tags/key`,
    /// `refs/trees/t/conf/a.env`).
    pub path: Vec<u8>,
    pub oid: Oid,
    pub size: u64,
}

/// The blobs that refs name without a commit: a tag, lightweight or annotated, of a blob (as
/// git.git keeps its maintainer's public key) or of a tree, and every blob under that
/// tree. A clone carries them as it carries every ref, and no commit holds them: the walk,
/// which starts from commits as `git rev-list --all` does, never meets them. A ref whose
/// object cannot be read is left out here (the walk names it); a blob under a tree that
/// cannot be read is listed all the same, for the worker that reads it to name it.
pub fn ref_blobs(repo: &Path, store: &Arc<ObjectStore>) -> Result<Vec<RefBlob>, HistoryError> {
    use super::order::{FOR_EACH_REF, MAX_TAG_DEPTH};
    use gix::objs::Kind;
    let mut refs = git(repo);
    refs.args(["for-each-ref", "--format=%(objectname) %(refname)"]);
    let out = super::running::output(repo, refs, FOR_EACH_REF)?;
    let mut reader = tree_reader(repo, store)?;
    let (mut buf, mut diff, mut blobs) = (
        Vec::new(),
        crate::input::commits::TreeDiff::default(),
        Vec::new(),
    );
    for line in out.split(|&b| b == b'\n') {
        let Some(space) = line.iter().position(|&b| b == b' ') else {
            continue;
        };
        let (Some(mut id), name) = (Oid::from_hex(&line[..space]), &line[space + 1..]) else {
            continue;
        };
        for _ in 0..MAX_TAG_DEPTH {
            // Most refs name a commit, told from its header without reading it.
            let kind = match reader.header(&id) {
                Ok((Some(Kind::Commit), _)) | Err(_) => break,
                Ok((Some(Kind::Blob), size)) => {
                    blobs.push(RefBlob {
                        path: name.to_vec(),
                        oid: id,
                        size,
                    });
                    break;
                }
                Ok((Some(Kind::Tree), _)) => Kind::Tree,
                // A tag, or a delta whose kind its header does not say.
                Ok(_) => match reader.read_object(&id, &mut buf) {
                    Ok(kind) => kind,
                    Err(_) => break,
                },
            };
            match kind {
                Kind::Tag => match buf.strip_prefix(b"object ").and_then(|t| t.get(..40)) {
                    Some(hex) => match Oid::from_hex(hex) {
                        Some(target) => id = target,
                        None => break,
                    },
                    None => break,
                },
                Kind::Blob => {
                    blobs.push(RefBlob {
                        path: name.to_vec(),
                        oid: id,
                        size: buf.len() as u64,
                    });
                    break;
                }
                Kind::Tree => {
                    if diff.run(&mut reader, None, Some(id)).is_ok() {
                        for change in diff.changes() {
                            let Some((_, oid)) = change.new.filter(|&(m, _)| has_content(m)) else {
                                continue;
                            };
                            let mut path = name.to_vec();
                            path.push(b'/');
                            path.extend_from_slice(diff.path(change));
                            let size = reader.header(&oid).map_or(0, |(_, size)| size);
                            blobs.push(RefBlob { path, oid, size });
                        }
                    }
                    break;
                }
                Kind::Commit => break,
            }
        }
    }
    Ok(blobs)
}

/// A blob whose content is scanned: a regular file or a symlink (its target).
fn has_content(mode: u32) -> bool {
    matches!(mode >> 12, 0o10 | 0o12)
}

/// Which blobs are new, commit by commit in git's order: each blob yielded once, with a
/// hash of the path it was yielded at (for `base`), and the counts.
#[derive(Default)]
pub(super) struct Introducer {
    seen: OidMap,
    stats: HistoryStats,
    /// Whether a path is in the scan's scope (`--exclude`, `allow_paths`): a blob met at a
    /// path out of it is not marked seen ([`Introducer::change`]).
    in_scope: Option<InScope>,
}

/// Whether a blob's path (as the tree holds it) is in the scan's scope ([`walk`]).
pub type InScope = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// A change's new blob, introduced by its commit.
struct Introduced {
    oid: Oid,
    symlink: bool,
    base: Option<Oid>,
}

impl Introduced {
    /// The blob to yield: at `path` in `commit`, of `size` (0 until sized) and chain start
    /// `chain`.
    fn blob(
        self,
        path: Vec<u8>,
        commit: &Arc<CommitInfo>,
        size: u64,
        chain: Option<u64>,
    ) -> HistoryBlob {
        HistoryBlob {
            oid: self.oid,
            size,
            path,
            symlink: self.symlink,
            commit: Arc::clone(commit),
            base: self.base,
            chain,
        }
    }
}

impl Introducer {
    fn new(in_scope: Option<InScope>) -> Introducer {
        Introducer {
            in_scope,
            ..Introducer::default()
        }
    }

    /// A commit listed, whole or (`unlisted`) not.
    fn listed(&mut self, unlisted: Option<String>) {
        self.stats.commits += 1;
        if let Some(why) = unlisted {
            self.stats.unlisted += 1;
            self.stats.first_unlisted.get_or_insert(why);
        }
    }

    /// The blob `change` introduces, if it is new; `path` is read only for files and
    /// symlinks.
    fn change(
        &mut self,
        path: &[u8],
        old: Option<(u32, Oid)>,
        new: Option<(u32, Oid)>,
        merge: bool,
    ) -> Option<Introduced> {
        let Some((dst_mode, dst_id)) = new else {
            self.stats.deletions += 1;
            return None;
        };
        let kind = dst_mode >> 12;
        if kind == 0o16 {
            // A gitlink: a commit of another repository, nothing to read here.
            self.stats.submodules += u64::from(self.seen.insert(dst_id, 0).is_none());
            return None;
        }
        if !has_content(dst_mode) {
            return None;
        }
        let path_hash = hash_path(path);
        if self.seen.contains_key(&dst_id) {
            self.stats.duplicate_blobs += 1;
            return None;
        }
        if self
            .in_scope
            .as_ref()
            .is_some_and(|in_scope| !in_scope(path))
        {
            // Yielded, for the emitter to count out of scope, but not seen: the same blob
            // at a path in scope later (moved out of an excluded directory, copied) is new
            // there, and is scanned.
            return Some(Introduced {
                oid: dst_id,
                symlink: kind == 0o12,
                base: None,
            });
        }
        self.seen.insert(dst_id, path_hash);
        let base = old
            .filter(|&(src_mode, src_id)| {
                !merge
                    && src_mode >> 12 == 0o10
                    && kind == 0o10
                    && self.seen.get(&src_id) == Some(&path_hash)
            })
            .map(|(_, src_id)| src_id);
        Some(Introduced {
            oid: dst_id,
            symlink: kind == 0o12,
            base,
        })
    }

    /// The new blobs of a commit a diff thread diffed and sized.
    fn commit(&mut self, diffed: Diffed) -> impl Iterator<Item = HistoryBlob> + '_ {
        let Diffed {
            commit,
            unlisted,
            changes,
            ..
        } = diffed;
        self.listed(unlisted);
        let merge = commit.merge;
        let info = Arc::new(commit.info);
        changes.into_iter().filter_map(move |c| {
            let new = self.change(&c.path, c.old, c.new, merge)?;
            Some(new.blob(c.path, &info, c.size, c.chain))
        })
    }
}

/// The parser thread: commits in from `git rev-list` (ids, tree, author), each one's tree
/// diffed against its first parent's in-process ([`crate::input::commits`]), each new blob out to
/// the caller; or, with `diff_threads`, the commits handed out to that many diff threads.
/// Returns the counts it owns (commits, duplicates, submodules, deletions; the caller's
/// [`Introducer`] owns them when split).
pub(super) fn read_commits(
    repo: &Path,
    store: &Arc<ObjectStore>,
    mut list: Commits,
    tx: &mpsc::SyncSender<Msg>,
    diff_threads: usize,
    chains: bool,
    mut introducer: Introducer,
) -> Result<HistoryStats, HistoryError> {
    let mut reader = tree_reader(repo, store)?;
    if diff_threads > 0 {
        return hand_out(
            repo,
            &mut list,
            &mut reader,
            store,
            tx,
            diff_threads,
            chains,
        );
    }
    let mut parents = ParentTrees::default();
    let mut diff = crate::input::commits::TreeDiff::default();
    while let Some(commit) = list.next()? {
        let parent_tree = parents.take(repo, &mut reader, &commit)?;
        introducer.listed(diff_commit(&mut diff, &mut reader, parent_tree, &commit));
        let info = Arc::new(commit.info);
        for change in diff.changes() {
            let path = diff.path(change);
            let Some(new) = introducer.change(path, change.old, change.new, commit.merge) else {
                continue;
            };
            // Sized by the caller's thread, in parallel with this one.
            let blob = new.blob(path.to_vec(), &info, 0, None);
            if tx.send(Msg::Blob(blob)).is_err() {
                return Ok(introducer.stats);
            }
        }
    }
    Ok(introducer.stats)
}

/// A reader for commits and trees, with their caches ([`TREE_CACHE_BYTES`]).
pub(super) fn tree_caches(store: &Arc<ObjectStore>) -> io::Result<BlobReader> {
    let (rebuilt, whole) = TREE_CACHE_BYTES;
    BlobReader::with_caches(store, rebuilt, whole)
}

/// [`tree_caches`], its failure described for the walk.
fn tree_reader(repo: &Path, store: &Arc<ObjectStore>) -> Result<BlobReader, HistoryError> {
    tree_caches(store).map_err(|e| {
        // The store refuses a SHA-256 repository as `Unsupported` (`open_objects`).
        if e.kind() == io::ErrorKind::Unsupported {
            HistoryError::UnsupportedObjectFormat {
                repo: repo.to_path_buf(),
            }
        } else {
            HistoryError::Io {
                repo: repo.to_path_buf(),
                command: READ,
                source: e,
            }
        }
    })
}

/// The parser split: hands the commits out, [`BLOCK`] in a row to each of `threads` diff
/// threads, which send what they diffed and sized straight to the caller. A diff thread
/// holds at most [`BLOCK`] commits queued, so the walk runs at most that far ahead of the
/// slowest; when the caller stops, the diff threads' sends fail, they end, and so does this.
fn hand_out(
    repo: &Path,
    list: &mut Commits,
    reader: &mut BlobReader,
    store: &Arc<ObjectStore>,
    tx: &mpsc::SyncSender<Msg>,
    threads: usize,
    chains: bool,
) -> Result<HistoryStats, HistoryError> {
    thread::scope(|scope| {
        let mut queues = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (queue, jobs) = mpsc::sync_channel::<(u64, Option<Oid>, Listed)>(BLOCK);
            let tx = tx.clone();
            scope.spawn(move || diff_thread(store, jobs, &tx, chains));
            queues.push(queue);
        }
        let mut parents = ParentTrees::default();
        let mut seq = 0u64;
        while let Some(commit) = list.next()? {
            let parent_tree = parents.take(repo, reader, &commit)?;
            let queue = &queues[(seq / BLOCK as u64) as usize % threads];
            if queue.send((seq, parent_tree, commit)).is_err() {
                break;
            }
            seq += 1;
        }
        Ok(HistoryStats::default())
    })
}

/// A diff thread: diffs each commit it is handed, sizes the blobs of its files and
/// symlinks (once per thread while it remembers them), and sends the commit to the caller.
fn diff_thread(
    store: &Arc<ObjectStore>,
    jobs: mpsc::Receiver<(u64, Option<Oid>, Listed)>,
    tx: &mpsc::SyncSender<Msg>,
    chains: bool,
) {
    let mut reader = tree_caches(store);
    let mut sizer = Sizer::new(store, chains);
    let mut sized = OidMap::<(u64, Option<u64>)>::default();
    let mut diff = crate::input::commits::TreeDiff::default();
    for (seq, parent_tree, commit) in jobs {
        let unlisted = match reader.as_mut() {
            Ok(reader) => diff_commit(&mut diff, reader, parent_tree, &commit),
            Err(e) => Some(format!("commit {}: {READ}: {e}", commit.id)),
        };
        let mut changes = Vec::with_capacity(diff.changes().len());
        for change in diff.changes() {
            let content = change.new.filter(|&(mode, _)| has_content(mode));
            let (size, chain) = content.map_or((0, None), |(_, oid)| {
                if sized.len() == SIZED_REMEMBERED {
                    sized.clear();
                }
                *sized.entry(oid).or_insert_with(|| sizer.size(&oid))
            });
            changes.push(DiffedChange {
                path: content.map_or_else(Vec::new, |_| diff.path(change).to_vec()),
                old: change.old,
                new: change.new,
                size,
                chain,
            });
        }
        let diffed = Diffed {
            seq,
            commit,
            unlisted,
            changes,
        };
        if tx.send(Msg::Diffed(diffed)).is_err() {
            return;
        }
    }
}

/// How many blob sizes a diff thread remembers (a blob a merge brings back is sized again
/// past that): 24 bytes each.
const SIZED_REMEMBERED: usize = 1 << 16;

/// The caches of the walk's reader (rebuilt, whole), for trees and the odd parent commit.
/// The diff reads each commit's trees right after its parent's, so little is needed:
/// instructions of `scanner scan --history --threads 1` on ripgrep's history (callgrind)
/// were 2.655 G with 8 + 4 MiB, 2.653 G with 1 MiB + 512 KiB, 2.652 G with 512 + 256 KiB;
/// the workers' caches stay as large as blobs need.
pub(super) const TREE_CACHE_BYTES: (usize, usize) = (1 << 20, 512 << 10);

/// Reading commits and trees in-process, as errors name it.
pub(super) const READ: &str = "reading objects";

/// How many commits' trees [`read_commits`] remembers (about 56 bytes each): most parents
/// are the commit listed just before; a merge's first parent or a branch's base is often
/// further back.
pub(super) const RECENT_TREES: usize = 1 << 16;

/// The tree of commit `id`, read into `buf`.
pub(super) fn read_commit_tree(
    reader: &mut BlobReader,
    id: Oid,
    buf: &mut Vec<u8>,
) -> Result<Oid, crate::input::commits::ObjectError> {
    let error = |source| crate::input::commits::ObjectError { oid: id, source };
    let kind = reader.read_object(&id, buf).map_err(error)?;
    reader
        .expect(&id, kind, gix::objs::Kind::Commit)
        .map_err(error)?;
    buf.strip_prefix(b"tree ")
        .and_then(|rest| Oid::from_hex(rest.get(..40)?))
        .ok_or_else(|| {
            error(io::Error::new(
                io::ErrorKind::InvalidData,
                "a commit without a tree",
            ))
        })
}

/// Reads up to the next NUL into `tok` (without it); false at the end of input.
pub(super) fn next_token(input: &mut impl BufRead, tok: &mut Vec<u8>) -> io::Result<bool> {
    tok.clear();
    let n = input.read_until(0, tok)?;
    if tok.last() == Some(&0) {
        tok.pop();
    }
    Ok(n > 0)
}
