//! The commits `git rev-list --reverse --topo-order --parents --all` lists, listed in-process.
//!
//! # Why
//!
//! `git rev-list --topo-order` writes nothing until it has read every commit, and the scan
//! waits for its first one: 30 ms of ripgrep's history scan on two cores, 80-90 ms of a
//! 125-160 ms scan at 16 threads on a lent 16-core machine, 150 ms on moto's 19,934
//! commits. The commits are read here by many threads instead: git's pack-objects writes
//! every commit at the front of a pack ([`Packs::leading_objects`]), so the commits can be
//! read and parsed in parallel before the walk knows which are reachable, and the walk
//! itself then orders parsed commits in memory. It runs on a thread of its own from
//! [`start`](super::start), beside the rules being compiled. git still lists the refs,
//! at the same time (`git show-ref`, 2 ms for ripgrep's 1,575 refs; step 1 below).
//!
//! Measured on two cores (hyperfine, 20 runs each, interleaved, the same build with the
//! listing in-process or by git): ripgrep's history at `--threads 2` 184.7 against
//! 194.1 ms, at `--threads 16` 237.0 against 250.7 ms, at `--threads 1` even (261.6
//! against 258.3 ms; one thread reads the commits as fast as git does); moto's at
//! `--threads 2` 3.13-3.23 s against 3.26-3.36 s (5 rounds). CPU time is the same: the
//! commits are inflated once either way, by git or here.
//!
//! # The same order as git's
//!
//! The order decides which commit a blob is attributed to, so it is git's, step for step
//! (git 2.47's `revision.c` and `commit.c`, with no commit-graph in play):
//!
//! 1. The tips are what git would start from, in its order, each once: what `--all` adds,
//!    every ref in refname order then HEAD (then other worktrees' HEADs), tags peeled, then
//!    the stash entries, each not a commit left out (a tag of a tree). `git show-ref --head
//!    -d` lists the refs with their tags peeled ([`all_refs`] puts HEAD after them); with
//!    `--reflog`, or another worktree, `git rev-list --no-walk=unsorted` with the same
//!    selection lists the tips (14 ms on ripgrep: it reads every commit they name). A ref
//!    whose object is missing makes show-ref die, as it makes `--all` die: then `git
//!    for-each-ref` and `git rev-parse HEAD` list them, the tags are peeled here, and each
//!    such ref is left out and named ([`Ordered::broken`], an error): the rest of the
//!    history is scanned. Then sorted by committer date, newest first, stably
//!    (`commit_list_sort_by_date`).
//! 2. `limit_list`: a queue by committer date, newest first, ties in the order they were
//!    queued; each commit taken from it queues its parents not yet seen, in their order,
//!    and joins the list.
//! 3. `sort_in_topological_order` in graph order: each commit's in-degree within the list
//!    plus one; the tips (in-degree one) on a stack, the list's first on top; a commit taken
//!    from the stack is written, and each parent whose last child that was is pushed.
//! 4. `--reverse`: the list written back to front.
//!
//! Dates are git's too: the number after the committer line's last `>`, read as an unsigned
//! 64-bit integer as `strtoumax` reads it (a negative date wraps, an overflow saturates), or
//! 0 when the header is not `author` then `committer`. A `shallow` file cuts the parents of
//! the commits it names, as git's does.
//!
//! # When git lists them instead
//!
//! Named revisions or `--since` (git's revision syntax and date limiting are the interface
//! users know), a `grafts` file, and anything unexpected: a tip that cannot be read or
//! parsed the way git parses it, a tips listing that failed. (A parent that cannot be read
//! or parsed as a commit, where git's walk dies, is cut as a `shallow` file cuts one, and
//! named with its child ([`Ordered::cut`], an error): the history that is there is
//! scanned.) Then [`start`](super::start)'s `git rev-list` runs as before, and reports any error in its
//! own words. Authors and subjects that [`author_fields`] does not reproduce byte for byte
//! (another encoding, an unusual author line) are asked of git, for those commits only,
//! with their dates raw ([`date`](super::format::date): git's `%aI` dies on some).
//!
//! # Memory
//!
//! While ordering, every commit read (reachable or not): its id, tree, date, parents and
//! author fields, about 300 bytes each. Once ordered, what the walk needs: about 80 bytes a
//! commit and its fields (118 bytes a commit on moto), 4 MB for moto's 19,934 commits,
//! handed back as the walk takes them (`Ordered::next`). `git rev-list` held about 0.5 KB
//! a commit, in its own process.

use super::format::{author_fields, AuthorFields};
use super::walk::{List, Listed, LIST};
use super::*;
use crate::input::pack::{PackReader, Packs};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

/// A listing under way on a thread of its own ([`spawn`]).
pub(super) struct Listing(thread::JoinHandle<Option<Ordered>>);

impl Listing {
    /// The commits in git's order, or `None`: list them with git (the module's "When git
    /// lists them instead").
    pub(super) fn join(self) -> Option<Ordered> {
        self.0.join().ok().flatten()
    }
}

/// What the walk starts from, and how it is listed ([`spawn`]).
pub(super) struct Tips {
    /// `git rev-list --no-walk=unsorted` with the walk's selection: the commits git starts
    /// from, tags peeled, in its order, each once.
    pub(super) git: Command,
    /// The stash entries the selection names after `--all`, where that is the whole
    /// selection (no `--reflog`): then `git show-ref` lists the refs instead
    /// ([`all_refs`]), and `git` only where other worktrees' HEADs count too.
    pub(super) stash: Option<Vec<String>>,
}

/// Starts listing the commits that `tips` starts from, their commits read by `threads`
/// threads.
pub(super) fn spawn(repo: &Path, store: &Arc<ObjectStore>, tips: Tips, threads: usize) -> Listing {
    let repo = repo.to_path_buf();
    let store = Arc::clone(store);
    Listing(thread::spawn(move || {
        let ordered = list(&repo, &store, tips, threads);
        // What the listing freed: its threads' arenas kept it otherwise, and the scan's
        // own threads never reuse it: moto's history peaked 12-15 MB higher without this
        // (`MALLOC_ARENA_MAX=1` showed the same difference gone), where the listing's heap
        // holds 4 MB at most.
        crate::malloc::hand_back_freed();
        ordered
    }))
}

/// The commits in git's order (see the module docs), or `None`.
fn list(repo: &Path, store: &Arc<ObjectStore>, tips: Tips, threads: usize) -> Option<Ordered> {
    if std::env::var_os("GIT_GRAFT_FILE").is_some() {
        return None;
    }
    // git lists the tips while the commits are read: the refs by show-ref, `git rev-list`
    // kept unstarted for another worktree; else `git rev-list`.
    let listing = match tips {
        Tips {
            git,
            stash: Some(stash),
        } => TipsListing::Refs(
            Running::spawn(repo, show_refs(repo), SHOW_REF).ok()?,
            stash,
            Box::new(git),
        ),
        Tips { git, stash: None } => TipsListing::Git(Running::spawn(repo, git, TIPS).ok()?),
    };
    let read = || {
        let (packs, common) = (store.packs().ok()?, store.common_dir().ok()?);
        if common.join("info/grafts").exists() {
            return None;
        }
        let graph = Graph::read(store, &packs, threads.max(1), shallow(&common)?)?;
        Some((graph, common))
    };
    let Some((mut graph, common)) = read() else {
        match listing {
            TipsListing::Refs(running, ..) | TipsListing::Git(running) => running.kill(),
        }
        return None;
    };
    let mut broken = Vec::new();
    let tips = match listing {
        // `--all` adds the HEAD of every other worktree: git lists those.
        TipsListing::Refs(running, _, git) if common.join("worktrees").exists() => {
            running.kill();
            one_a_line(&read_output(repo, Running::spawn(repo, *git, TIPS).ok()?)?)?
        }
        TipsListing::Refs(running, stash, _) => match read_output(repo, running) {
            Some(out) => all_refs(&out, &stash)?,
            // show-ref dies on a ref whose object is missing, as `--all` does.
            None => graph.tips_past_broken_refs(repo, &stash, &mut broken)?,
        },
        TipsListing::Git(running) => one_a_line(&read_output(repo, running)?)?,
    };
    let order = graph.order(&tips)?;
    // Newest last, their fields laid out in the same order, so that both shrink from their
    // ends as the walk takes the commits (`Ordered::next`); the graph is let go.
    let mut texts = Texts::default();
    let entries: Vec<Entry> = order
        .iter()
        .rev()
        .map(|&c| {
            let mut entry = graph.entry(c);
            entry.fields = entry.fields.map(|at| texts.extend(graph.texts.record(at)));
            entry
        })
        .collect();
    let cut = std::mem::take(&mut graph.cut);
    drop(graph);
    let asked = ask_git(repo, &entries)?;
    Some(Ordered {
        entries,
        texts,
        asked,
        broken,
        cut,
    })
}

/// The tips being listed ([`list`]).
enum TipsListing {
    /// `git show-ref`, with the stash entries to add, and the `git rev-list` that lists the
    /// tips instead where another worktree's HEAD counts.
    Refs(Running, Vec<String>, Box<Command>),
    /// `git rev-list --no-walk=unsorted`.
    Git(Running),
}

/// The tips listings, as errors would name them.
const TIPS: &str = "git rev-list --no-walk";
const SHOW_REF: &str = "git show-ref";
pub(super) const FOR_EACH_REF: &str = "git for-each-ref";

/// How many tags deep a ref is peeled before it counts as broken.
pub(super) const MAX_TAG_DEPTH: usize = 64;

/// `git show-ref --head -d`: HEAD, then every ref in the order `--all` adds them, each tag
/// followed by its peeled id (`ID NAME^{}`). git peels from `packed-refs` where it recorded
/// the peeled values, and reads nothing else: 2 ms for ripgrep's 1,575 refs, against 14 ms
/// for `git rev-list --no-walk=unsorted --all`, which reads every commit they name (at 16
/// threads, longer than the commits take to read here). It exits with 1 where there is no
/// ref at all: git lists the commits then.
fn show_refs(repo: &Path) -> Command {
    let mut cmd = git(repo);
    cmd.args(["show-ref", "--head", "-d"]);
    cmd
}

/// What `git rev-list --no-walk=unsorted --all STASH...` starts from, from `git show-ref
/// --head -d`'s output `out`: every ref in its order, each tag peeled, then HEAD (`--all`
/// adds it after the refs; show-ref lists it first), then `stash`. What is not a commit
/// (a tag of a tree) is left out later, as git leaves it out (`Graph::order`). `None`
/// where the output is not of that shape (an id of another length, a peeled id after
/// another ref, HEAD after the refs), for git to list the commits.
pub(super) fn all_refs(out: &[u8], stash: &[String]) -> Option<Vec<Oid>> {
    let (mut refs, mut head) = (Vec::new(), None);
    let mut last: &[u8] = b"";
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let space = line.iter().position(|&b| b == b' ')?;
        let (id, name) = (Oid::from_hex(&line[..space])?, &line[space + 1..]);
        let listed = match name.strip_suffix(b"^{}") {
            // The ref just listed, peeled.
            Some(peeled) if peeled == last => {
                if name == b"HEAD^{}" {
                    head.as_mut()?
                } else {
                    refs.last_mut()?
                }
            }
            Some(_) => return None,
            None if name == b"HEAD" => {
                if !refs.is_empty() || head.is_some() {
                    return None;
                }
                head.insert(id)
            }
            None => {
                refs.push(id);
                refs.last_mut()?
            }
        };
        *listed = id;
        last = name;
    }
    refs.extend(head);
    then_stash(refs, stash)
}

/// `tips` followed by the `stash` entries (hex ids), which `--all`'s selection names after
/// the refs; `None` where one is not an id.
fn then_stash(mut tips: Vec<Oid>, stash: &[String]) -> Option<Vec<Oid>> {
    for id in stash {
        tips.push(Oid::from_hex(id.as_bytes())?);
    }
    Some(tips)
}

/// What `run` wrote, once it exited successfully.
fn read_output(repo: &Path, mut run: Running) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let read = run.child.stdout.take()?.read_to_end(&mut out);
    run.finish(repo).ok()?;
    read.ok()?;
    Some(out)
}

/// The commit ids in `out`, one a line.
fn one_a_line(out: &[u8]) -> Option<Vec<Oid>> {
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(Oid::from_hex)
        .collect()
}

/// The commits a `shallow` file in `common` names (none without one); `None` when it
/// cannot be read.
fn shallow(common: &Path) -> Option<OidMap<()>> {
    match std::fs::read(common.join("shallow")) {
        Ok(text) => text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| Oid::from_hex(l).map(|id| (id, ())))
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(OidMap::default()),
        Err(_) => None,
    }
}

/// One commit, parsed as git parses it.
struct Node {
    id: Oid,
    tree: Oid,
    parents: Parents,
    /// git's `commit->date`: see the module docs.
    date: u64,
    /// Where its author fields are in [`Texts`]; `None`: asked of git.
    fields: Option<usize>,
}

/// The author fields of many commits, one after another, `name\0email\0date\0summary\0`
/// each: none of them holds a NUL ([`author_fields`] refuses a commit with one). One
/// allocation for every commit's strings rather than four a commit (moto's: 2.3 MB).
#[derive(Default)]
struct Texts(Vec<u8>);

impl Texts {
    /// Appends `fields`; returns where they start.
    fn push(&mut self, fields: &AuthorFields) -> usize {
        let at = self.0.len();
        for field in [&fields.name, &fields.email, &fields.date, &fields.summary] {
            self.0.extend_from_slice(field.as_bytes());
            self.0.push(0);
        }
        at
    }

    /// Appends `records` (whole ones: another's, or one [`Texts::record`]); returns where
    /// they start, by which their positions moved.
    fn extend(&mut self, records: &[u8]) -> usize {
        let at = self.0.len();
        self.0.extend_from_slice(records);
        at
    }

    /// The record starting at `at`, its four NULs included.
    fn record(&self, at: usize) -> &[u8] {
        let rest = &self.0[at..];
        let end = memchr::memchr_iter(0, rest)
            .nth(3)
            .map_or(rest.len(), |nul| nul + 1);
        &rest[..end]
    }

    /// The fields starting at `at`.
    fn get(&self, at: usize) -> AuthorFields {
        let mut fields = self.0[at..]
            .split(|&b| b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned());
        let mut next = || fields.next().unwrap_or_default();
        AuthorFields {
            name: next(),
            email: next(),
            date: next(),
            summary: next(),
        }
    }
}

/// A commit as the walk gets it, once ordered.
struct Entry {
    id: Oid,
    tree: Oid,
    parent: Option<Oid>,
    merge: bool,
    /// As [`Node::fields`].
    fields: Option<usize>,
}

/// A commit's parents, in order.
enum Parents {
    /// As the commit names them.
    Ids(Vec<Oid>),
    /// As indexes in [`Graph::nodes`], once [`Graph::resolve`]d.
    Nodes(Vec<u32>),
}

impl Parents {
    /// The indexes, once resolved (none before).
    fn nodes(&self) -> &[u32] {
        match self {
            Parents::Nodes(nodes) => nodes,
            Parents::Ids(_) => &[],
        }
    }
}

/// The commits read so far, by id.
struct Graph {
    nodes: Vec<Node>,
    by_id: OidMap<u32>,
    texts: Texts,
    /// Reads the commits that were not at the front of a pack.
    reader: BlobReader,
    buf: Vec<u8>,
    shallow: OidMap<()>,
    /// The parents that could not be read, each with its child: cut as a `shallow` file
    /// cuts them ([`Graph::resolve`]).
    cut: Vec<(Oid, Oid)>,
}

impl Graph {
    /// Every commit at the front of the packs, read by `threads` threads, each a share
    /// of them in a row (a commit stored as a delta is most often against one just before).
    fn read(
        store: &Arc<ObjectStore>,
        packs: &Arc<Packs>,
        threads: usize,
        shallow: OidMap<()>,
    ) -> Option<Graph> {
        let leading = packs.leading_objects();
        let share = leading.len().div_ceil(threads).max(1);
        let parsed: Vec<(Vec<Node>, Texts)> = thread::scope(|scope| {
            let handles: Vec<_> = leading
                .chunks(share)
                .map(|ids| scope.spawn(|| read_leading(packs, ids)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok())
                .collect::<Vec<_>>()
        })
        .into_iter()
        .collect::<Option<_>>()?;
        let mut graph = Graph {
            nodes: Vec::with_capacity(leading.len()),
            by_id: OidMap::default(),
            texts: Texts::default(),
            reader: walk::tree_caches(store).ok()?,
            buf: Vec::new(),
            shallow,
            cut: Vec::new(),
        };
        let bytes = parsed.iter().map(|(_, texts)| texts.0.len()).sum();
        graph.texts.0.reserve_exact(bytes);
        for (nodes, texts) in parsed {
            let shift = graph.texts.extend(&texts.0);
            for mut node in nodes {
                node.fields = node.fields.map(|at| at + shift);
                graph.insert(node);
            }
        }
        Some(graph)
    }

    fn insert(&mut self, mut node: Node) -> u32 {
        if self.shallow.contains_key(&node.id) {
            node.parents = Parents::Nodes(Vec::new());
        }
        let at = self.nodes.len() as u32;
        self.by_id.insert(node.id, at);
        self.nodes.push(node);
        at
    }

    /// The commit `id`, read now if it was not at the front of a pack; `None` when it
    /// cannot be read or is not a commit.
    fn node(&mut self, id: Oid) -> Option<u32> {
        self.commit(id).flatten()
    }

    /// The commit `id`, read if need be; `Some(None)` where `id` is another kind of object
    /// (a tip that git leaves out: a tag of a tree), `None` where it cannot be read.
    fn commit(&mut self, id: Oid) -> Option<Option<u32>> {
        if let Some(&at) = self.by_id.get(&id) {
            return Some(Some(at));
        }
        let kind = self.reader.read_object(&id, &mut self.buf).ok()?;
        if kind != gix::objs::Kind::Commit {
            return Some(None);
        }
        let node = parse(id, &self.buf, &mut self.texts)?;
        Some(Some(self.insert(node)))
    }

    /// The tips `--all` and `stash` start from, as [`all_refs`] makes them, where `git
    /// show-ref` died on a ref whose object is missing (git's `--all` dies there too, and
    /// nothing of the history was scanned): the refs as `git for-each-ref` lists them, in
    /// the same order, and HEAD (`git rev-parse`), their tags peeled here. Each ref whose
    /// object, or a tag's, cannot be read is named in `broken` and left out (HEAD not
    /// where a ref named already names the same object: its branch). `None` where
    /// git fails at that too.
    fn tips_past_broken_refs(
        &mut self,
        repo: &Path,
        stash: &[String],
        broken: &mut Vec<String>,
    ) -> Option<Vec<Oid>> {
        let mut refs = git(repo);
        refs.args(["for-each-ref", "--format=%(objectname) %(refname)"]);
        let refs = read_output(repo, Running::spawn(repo, refs, FOR_EACH_REF).ok()?)?;
        let mut head = git(repo);
        head.args(["rev-parse", "-q", "--verify", "HEAD"]);
        // Nothing, and exit status 1, where HEAD names no commit yet.
        let head = head.output().ok()?;
        let head = String::from_utf8_lossy(&head.stdout);
        let head = head.trim();
        let refs = String::from_utf8_lossy(&refs);
        let named = refs.lines().map(|line| line.split_once(' '));
        let named = named.chain((!head.is_empty()).then_some(Some((head, "HEAD"))));
        let (mut tips, mut broken_ids) = (Vec::new(), Vec::new());
        for ref_ in named {
            let (id, name) = ref_?;
            let id = Oid::from_hex(id.as_bytes())?;
            match self.peeled(id) {
                Some(id) => tips.push(id),
                // HEAD on a branch named already (or detached on its object).
                None if name == "HEAD" && broken_ids.contains(&id) => {}
                None => {
                    broken_ids.push(id);
                    broken.push(name.to_string());
                }
            }
        }
        then_stash(tips, stash)
    }

    /// What `id` names once its tags are peeled; `None` where an object on the way cannot be
    /// read.
    fn peeled(&mut self, mut id: Oid) -> Option<Oid> {
        for _ in 0..MAX_TAG_DEPTH {
            if self.by_id.contains_key(&id) {
                return Some(id);
            }
            let kind = self.reader.read_object(&id, &mut self.buf).ok()?;
            if kind != gix::objs::Kind::Tag {
                return Some(id);
            }
            let target = self.buf.strip_prefix(b"object ")?;
            id = Oid::from_hex(target.get(..40)?)?;
        }
        None
    }

    /// `at`'s parents as indexes, the parents read if need be. A parent that cannot be read
    /// as a commit (missing, corrupt) is cut, as a `shallow` file cuts one, and remembered
    /// in [`Graph::cut`]: git's walk dies there, and the history that is there is scanned.
    fn resolve(&mut self, at: u32) {
        let Parents::Ids(ids) = &mut self.nodes[at as usize].parents else {
            return;
        };
        let ids = std::mem::take(ids);
        let mut nodes = Vec::with_capacity(ids.len());
        for id in ids {
            match self.node(id) {
                Some(node) => nodes.push(node),
                None => self.cut.push((id, self.nodes[at as usize].id)),
            }
        }
        self.nodes[at as usize].parents = Parents::Nodes(nodes);
    }

    /// The commit at `c`, for the walk.
    fn entry(&self, c: u32) -> Entry {
        let node = &self.nodes[c as usize];
        let parents = node.parents.nodes();
        Entry {
            id: node.id,
            tree: node.tree,
            parent: parents.first().map(|&p| self.nodes[p as usize].id),
            merge: parents.len() > 1,
            fields: node.fields,
        }
    }

    /// The commits reachable from `tips`, oldest first, in git's order (the module docs'
    /// steps 1 to 4), as indexes.
    fn order(&mut self, tips: &[Oid]) -> Option<Vec<u32>> {
        // 1 and 2. limit_list: a queue by date, newest first, then by when queued; the tips
        // queued first, in their order (which is their stable sort by date).
        // What is not a commit, git leaves out (`git rev-list` lists none such).
        let mut commits = Vec::with_capacity(tips.len());
        for &id in tips {
            commits.extend(self.commit(id)?);
        }
        let tips = commits;
        let mut seen = vec![false; self.nodes.len()];
        let mut queue = BinaryHeap::new();
        let mut queued = 0u64;
        for &t in &tips {
            if !std::mem::replace(&mut seen[t as usize], true) {
                queue.push((self.nodes[t as usize].date, Reverse(queued), t));
                queued += 1;
            }
        }
        let mut list = Vec::new();
        while let Some((_, _, at)) = queue.pop() {
            self.resolve(at);
            seen.resize(self.nodes.len(), false);
            for &p in self.nodes[at as usize].parents.nodes() {
                if !std::mem::replace(&mut seen[p as usize], true) {
                    queue.push((self.nodes[p as usize].date, Reverse(queued), p));
                    queued += 1;
                }
            }
            list.push(at);
        }
        // 3. sort_in_topological_order, graph order.
        let mut indegree = vec![0u32; self.nodes.len()];
        for &c in &list {
            indegree[c as usize] = 1;
        }
        for &c in &list {
            for &p in self.nodes[c as usize].parents.nodes() {
                if indegree[p as usize] != 0 {
                    indegree[p as usize] += 1;
                }
            }
        }
        let mut stack: Vec<u32> = list
            .iter()
            .copied()
            .filter(|&c| indegree[c as usize] == 1)
            .collect();
        stack.reverse();
        let mut sorted = Vec::with_capacity(list.len());
        while let Some(c) = stack.pop() {
            for &p in self.nodes[c as usize].parents.nodes() {
                let d = &mut indegree[p as usize];
                if *d == 0 {
                    continue;
                }
                *d -= 1;
                if *d == 1 {
                    stack.push(p);
                }
            }
            indegree[c as usize] = 0;
            sorted.push(c);
        }
        // 4. --reverse.
        sorted.reverse();
        Some(sorted)
    }
}

/// `ids` (a share of [`Packs::leading_objects`]) read, the commits among them parsed. One
/// that cannot be read or parsed is left for [`Graph::commit`] to read where the walk
/// meets it (and cut there, or named by git, if it fails again).
fn read_leading(packs: &Arc<Packs>, ids: &[Oid]) -> (Vec<Node>, Texts) {
    let mut reader = PackReader::new(Arc::clone(packs), LEADING_CACHE_BYTES, 0).libdeflate_from(0);
    let mut buf = Vec::new();
    let mut nodes = Vec::with_capacity(ids.len());
    let mut texts = Texts::default();
    for &id in ids {
        if let Ok(Some(gix::objs::Kind::Commit)) = reader.read(&id, &mut buf) {
            nodes.extend(parse(id, &buf, &mut texts));
        }
    }
    (nodes, texts)
}

/// The cache each thread of [`read_leading`] keeps, for the bases of commits stored as
/// deltas (most often a commit just before).
const LEADING_CACHE_BYTES: usize = 256 << 10;

/// The commit object `raw`, parsed as git's `parse_commit_buffer` parses it; `None` where
/// git would fail ("bogus commit object", "bad parents").
fn parse(id: Oid, raw: &[u8], texts: &mut Texts) -> Option<Node> {
    // `tree <hex>\n`
    let rest = raw.strip_prefix(b"tree ")?;
    if raw.len() <= 46 || rest[40] != b'\n' {
        return None;
    }
    let tree = Oid::from_hex(&rest[..40])?;
    let mut at = 46;
    let mut parent_ids = Vec::new();
    // `parent <hex>\n`, as many as there are.
    while at + 47 < raw.len() && raw[at..].starts_with(b"parent ") {
        if raw[at + 47] != b'\n' {
            return None;
        }
        parent_ids.push(Oid::from_hex(&raw[at + 7..at + 47])?);
        at += 48;
    }
    Some(Node {
        id,
        tree,
        parents: Parents::Ids(parent_ids),
        date: commit_date(&raw[at..]),
        fields: author_fields(raw).map(|f| texts.push(&f)),
    })
}

/// git's `parse_commit_date` on what follows the parents: the committer's date.
fn commit_date(rest: &[u8]) -> u64 {
    if rest.len() <= 6 || !rest.starts_with(b"author") {
        return 0;
    }
    let Some(nl) = memchr::memchr(b'\n', rest) else {
        return 0;
    };
    let line = &rest[nl + 1..];
    if line.len() <= 9 || !line.starts_with(b"committer") {
        return 0;
    }
    let Some(eol) = memchr::memchr(b'\n', line) else {
        return 0;
    };
    let Some(gt) = memchr::memrchr(b'>', &line[..eol]) else {
        return 0;
    };
    let date = &line[gt + 1..eol];
    let start = date
        .iter()
        .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(date.len());
    strtoumax(&date[start..])
}

/// C's `strtoumax(s, NULL, 10)` where `s` starts with a digit or a sign: a negative number
/// wraps, one out of range saturates, no digits is 0.
fn strtoumax(s: &[u8]) -> u64 {
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n = 0u64;
    for &d in digits.iter().take_while(|d| d.is_ascii_digit()) {
        match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
        {
            Some(m) => n = m,
            None => return u64::MAX,
        }
    }
    if negative {
        n.wrapping_neg()
    } else {
        n
    }
}

/// The author fields git prints for the listed commits whose fields [`author_fields`] does
/// not reproduce: `git rev-list --no-walk=unsorted --stdin` with the walk's format, for
/// those commits only (none: no git run). `None` where git fails or lists other commits.
fn ask_git(repo: &Path, entries: &[Entry]) -> Option<OidMap<CommitInfo>> {
    let ids: Vec<Oid> = entries
        .iter()
        .filter(|e| e.fields.is_none())
        .map(|e| e.id)
        .collect();
    if ids.is_empty() {
        return Some(OidMap::default());
    }
    let mut cmd = git(repo);
    cmd.args(["rev-list", "--no-walk=unsorted", "--stdin"])
        .args(walk::FORMAT_ARGS)
        .stdin(Stdio::piped());
    let mut run = Running::spawn_with_stdin(repo, cmd, LIST).ok()?;
    let mut stdin = run.child.stdin.take()?;
    let stdout = run.child.stdout.take()?;
    // git reads every revision given on stdin before it writes anything.
    let written = ids.iter().try_for_each(|id| writeln!(stdin, "{id}"));
    drop(stdin);
    let mut list = List::new(repo, stdout);
    let mut asked = OidMap::default();
    for &id in &ids {
        match list.next() {
            Ok(Some(listed)) if listed.id == id => {
                asked.insert(id, listed.info);
            }
            _ => {
                run.kill();
                return None;
            }
        }
    }
    (run.finish(repo).is_ok() && written.is_ok()).then_some(asked)
}

/// The [`CommitInfo`] of commit `id` with `fields`.
fn info(id: Oid, fields: AuthorFields) -> CommitInfo {
    CommitInfo {
        id: id.to_string(),
        author_name: fields.name,
        author_email: fields.email,
        author_date: fields.date,
        summary: fields.summary,
    }
}

/// `v`'s spare room let go once it is three quarters of it.
fn shrink<T>(v: &mut Vec<T>) {
    if v.len() < v.capacity() / 4 {
        v.shrink_to_fit();
    }
}

/// The commits listed in-process, handed out in git's order.
pub(super) struct Ordered {
    /// Oldest last: taken from the end.
    entries: Vec<Entry>,
    /// Their fields, in the same order.
    texts: Texts,
    asked: OidMap<CommitInfo>,
    /// The refs left out: their objects are missing ([`Graph::tips_past_broken_refs`]).
    pub(super) broken: Vec<String>,
    /// The parents cut, each with its child: they could not be read ([`Graph::resolve`]).
    pub(super) cut: Vec<(Oid, Oid)>,
}

impl Ordered {
    /// The next commit, as [`List::next`] would list it from `git rev-list`.
    pub(super) fn next(&mut self) -> Option<Listed> {
        let Entry {
            id,
            tree,
            parent,
            merge,
            fields,
        } = self.entries.pop()?;
        let fields = fields.map(|at| {
            let fields = self.texts.get(at);
            self.texts.0.truncate(at);
            fields
        });
        // What the walk took is handed back as it goes (moto's 19,934 commits hold 4 MB).
        shrink(&mut self.entries);
        shrink(&mut self.texts.0);
        let info = match fields {
            Some(f) => info(id, f),
            // `ask_git` answered for every one of these.
            None => self.asked.remove(&id)?,
        };
        Some(Listed {
            id,
            parent,
            merge,
            tree,
            info,
        })
    }
}
