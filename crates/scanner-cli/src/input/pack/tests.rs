//! The pack reader against packs and objects git wrote.

use super::*;
use std::io::Write;

fn git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
    let out = crate::input::test_git::git_with_input(dir, args, input.unwrap_or_default());
    out.unwrap_or_else(|e| panic!("git {args:?}: {e}"))
}

/// A repository of `VERSIONS` commits editing a small and a large file
/// (over 64 KiB, so that deltas copy whole 64 KiB runs), made by
/// `git fast-import`, then packed with `repack_args`. Returns it with
/// every blob id, oldest first.
const VERSIONS: usize = 80;
fn repo(repack_args: &[&str]) -> (tempfile::TempDir, Vec<Oid>) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    git(d, &["init", "-q", "--bare"], None);
    let mut stream = Vec::new();
    let mut small: Vec<String> = (0..40).map(|i| format!("line {i}\n")).collect();
    let mut large: Vec<String> = (0..9000).map(|i| format!("row {i:05}\n")).collect();
    for v in 0..VERSIONS {
        let n = small.len();
        small[(v * 7) % n] = format!("edited {v}\n");
        if v % 3 == 0 {
            small.insert(v % 11, format!("inserted {v}\n"));
        }
        if v % 5 == 0 {
            small.remove((v * 3) % small.len());
        }
        let n = large.len();
        large[(v * 131) % n] = format!("changed in version {v}\n");
        let (s, l) = (small.concat(), large.concat());
        write!(
            stream,
            "commit refs/heads/main\ncommitter A <a@b> {} +0000\n",
            1_000_000 + v
        )
        .unwrap();
        write!(stream, "data 2\nv\n").unwrap();
        for (path, body) in [("small.txt", &s), ("large.txt", &l)] {
            write!(
                stream,
                "M 100644 inline {path}\ndata {}\n{body}\n",
                body.len()
            )
            .unwrap();
        }
    }
    git(d, &["fast-import", "--quiet"], Some(&stream));
    git(
        d,
        &repack_args
            .iter()
            .copied()
            .chain(["-adfq", "--depth=50", "--window=50"])
            .collect::<Vec<_>>(),
        None,
    );
    let mut ids: Vec<Oid> = Vec::new();
    let log = git(d, &["log", "--reverse", "--format=%H", "main"], None);
    for c in String::from_utf8(log).unwrap().lines() {
        for path in ["small.txt", "large.txt"] {
            let hex = git(d, &["rev-parse", &format!("{c}:{path}")], None);
            let oid = Oid::from_hex(hex.trim_ascii()).unwrap();
            if !ids.contains(&oid) {
                ids.push(oid);
            }
        }
    }
    (tmp, ids)
}

fn headers(d: &Path) -> (usize, usize) {
    let packs = Packs::open(&d.join("objects"));
    assert_eq!(packs.packs.len(), 1);
    let (index, pack) = &packs.packs[0];
    index.iter().fold((0, 0), |(ofs, refs), e| {
        match pack.entry(e.pack_offset).unwrap().header {
            Header::OfsDelta { .. } => (ofs + 1, refs),
            Header::RefDelta { .. } => (ofs, refs + 1),
            _ => (ofs, refs),
        }
    })
}

/// What git shows for each of `ids`: one `git cat-file --batch`.
fn shown(d: &Path, ids: &[Oid]) -> HashMap<Oid, Vec<u8>> {
    let ask: String = ids.iter().map(|o| format!("{o}\n")).collect();
    let out = git(d, &["cat-file", "--batch"], Some(ask.as_bytes()));
    let mut rest = &out[..];
    ids.iter()
        .map(|&oid| {
            let eol = rest.iter().position(|&b| b == b'\n').unwrap();
            let header = std::str::from_utf8(&rest[..eol]).unwrap();
            let size: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
            let body = rest[eol + 1..eol + 1 + size].to_vec();
            rest = &rest[eol + 2 + size..];
            (oid, body)
        })
        .collect()
}

/// A blob rebuilt from a delta is one allocation, shared by the cache
/// and the caller (no copy): read again while the caller holds it, or
/// after it let it go, the cache serves those same bytes from it.
#[test]
fn a_rebuilt_blob_is_shared_with_the_cache_not_copied() {
    let (tmp, ids) = repo(&["repack"]);
    let d = tmp.path();
    let want = shown(d, &ids);
    let packs = Arc::new(Packs::open(&d.join("objects")));
    let mut reader = PackReader::new(packs, 8 << 20, 4 << 20);
    let mut shared = 0;
    // Oldest first: each version a delta on a newer one, rebuilt.
    for oid in &ids {
        let (kind, held) = reader.read_shared(oid).unwrap().unwrap();
        assert_eq!(kind, Kind::Blob);
        assert!(*held == want[oid], "{oid}");
        let Some(cached) = reader.cached(oid) else {
            continue;
        };
        assert!(reader.is_cached(oid));
        assert!(Arc::ptr_eq(&cached, &held), "{oid}: a copy");
        let again = reader.read_shared(oid).unwrap().unwrap().1;
        assert!(Arc::ptr_eq(&again, &held), "{oid}");
        drop((held, again, cached));
        assert!(
            *reader.cached(oid).unwrap() == want[oid],
            "{oid} once let go"
        );
        shared += 1;
    }
    // Every version of both files fits in the caches.
    assert_eq!(shared, ids.len());
    let (deltas, _) = headers(d);
    assert!(deltas > ids.len() / 2, "{deltas} deltas: too few rebuilt");
}

/// Readers given the same caches find there what any of them read (the
/// very allocation), the versions of both files in turn; a reader with
/// caches of its own does not. Each reader adds its share to the caps, up
/// to the number of shares asked.
#[test]
fn readers_sharing_caches_find_what_the_others_read() {
    let (tmp, ids) = repo(&["repack"]);
    let d = tmp.path();
    let want = shown(d, &ids);
    let packs = Arc::new(Packs::open(&d.join("objects")));
    let caches: Arc<Mutex<Caches>> = Default::default();
    let (rebuilt, whole) = (8 << 20, 4 << 20);
    let mut first = PackReader::sharing(Arc::clone(&packs), &caches, rebuilt, whole, 2);
    let mut second = PackReader::sharing(Arc::clone(&packs), &caches, rebuilt, whole, 2);
    let third = PackReader::sharing(Arc::clone(&packs), &caches, rebuilt, whole, 2);
    let own = PackReader::new(Arc::clone(&packs), rebuilt, whole);
    assert_eq!(
        lock(&caches).caps(),
        (2 * REBUILT_START, 2 * rebuilt, 2 * whole)
    );
    for (i, oid) in ids.iter().enumerate() {
        let (reader, other) = if i % 2 == 0 {
            (&mut first, &mut second)
        } else {
            (&mut second, &mut first)
        };
        let held = reader.read_shared(oid).unwrap().unwrap().1;
        assert!(*held == want[oid], "{oid}");
        let found = other
            .cached(oid)
            .unwrap_or_else(|| panic!("{oid}: not shared"));
        assert!(Arc::ptr_eq(&found, &held), "{oid}: a copy");
        assert!(third.is_cached(oid), "{oid}");
        assert!(!own.is_cached(oid), "{oid}: in a reader's own caches");
    }
}

/// The workers' readers of a store share their caches when the store
/// expects more workers than there are cores, and keep their own with as
/// many: what one read, the other finds (`read_base` reads nothing over its
/// bound that the caches do not hold).
#[test]
fn workers_past_the_cores_share_their_readers_caches() {
    use crate::input::history::{BlobReader, ObjectStore};
    let (tmp, ids) = repo(&["repack"]);
    let want = shown(tmp.path(), &ids);
    let cores = crate::cores();
    for (workers, shared) in [(cores, false), (cores + 1, true)] {
        let store = Arc::new(ObjectStore::new(tmp.path()));
        store.expect_workers(workers);
        let mut first = BlobReader::with_store(&store).unwrap();
        let mut second = BlobReader::with_store(&store).unwrap();
        let mut buf = Vec::new();
        for oid in &ids {
            first.read_to_vec(oid, &mut buf).unwrap();
            assert!(buf == want[oid], "{oid}");
            let found = second.read_base(oid, 0).unwrap();
            assert_eq!(
                found.is_some(),
                shared,
                "{oid}: {workers} workers, {cores} cores"
            );
            assert!(found.is_none_or(|found| *found == buf), "{oid}");
        }
    }
}

/// Reads `ids` in order through one reader; each must be what git shows.
fn check(d: &Path, ids: &[Oid], want: &HashMap<Oid, Vec<u8>>, (rebuilt, whole): (usize, usize)) {
    let mut reader = PackReader::new(Arc::new(Packs::open(&d.join("objects"))), rebuilt, whole);
    let mut buf = Vec::new();
    for oid in ids {
        let kind = reader.read(oid, &mut buf).unwrap();
        assert_eq!(kind, Some(Kind::Blob), "{oid}");
        assert!(
            buf == want[oid],
            "{oid}: {} bytes read, git shows {}",
            buf.len(),
            want[oid].len()
        );
    }
}

/// The resident kilobytes of this process's mappings of `path`
/// (`/proc/self/smaps`).
#[cfg(target_os = "linux")]
fn resident_kb(path: &Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut ours = false;
    let mut kb = 0;
    for line in smaps.lines() {
        if let Some(rss) = line.strip_prefix("Rss:") {
            if ours {
                kb += rss.trim().trim_end_matches(" kB").parse::<u64>().unwrap();
            }
        } else if !line.split_whitespace().next().unwrap_or(":").ends_with(':') {
            // A mapping's first line, `start-end perms offset dev inode
            // path`, where every other line is `Field: value`.
            ours = line.ends_with(&*path.to_string_lossy());
        }
    }
    kb
}

/// Pages of the mapping handed back (the type's "Memory") leave the
/// resident memory, and are read again as they were: every version read
/// after a release is what git shows, through readers that cache nothing.
#[cfg(target_os = "linux")]
#[test]
fn pages_handed_back_leave_resident_memory_and_read_again_the_same() {
    let (tmp, ids) = repo(&["repack"]);
    let want = shown(tmp.path(), &ids);
    // A pack under RELEASE_MIN_PACK is never handed back.
    let mut small = Packs::open(&tmp.path().join("objects"));
    let path = small.packs[0].1.path().to_owned();
    let first = small.packs[0].1.entry_slice(0..64).unwrap();
    assert_ne!(
        std::hint::black_box(first.iter().map(|&b| b as u32).sum::<u32>()),
        0
    );
    small.read_from(RELEASE_BYTES);
    assert!(resident_kb(&path) > 0, "a small pack handed back");
    small.release_min = 0;
    let packs = Arc::new(small);
    let mut reader = PackReader::new(Arc::clone(&packs), 0, 0);
    let mut buf = Vec::new();
    for oid in &ids {
        assert_eq!(reader.read(oid, &mut buf).unwrap(), Some(Kind::Blob));
        assert!(buf == want[oid], "{oid}");
        assert!(
            resident_kb(&path) > 0,
            "{oid}: nothing of the pack resident"
        );
        release(&packs.packs[0].1);
        assert_eq!(resident_kb(&path), 0, "{oid}: pages still resident");
    }
    // Released by the count of bytes read: not before RELEASE_BYTES.
    reader.read(&ids[0], &mut buf).unwrap();
    let read = packs.read.load(Ordering::Relaxed) % RELEASE_BYTES;
    packs.read_from(RELEASE_BYTES - read - 1);
    assert!(resident_kb(&path) > 0);
    packs.read_from(1);
    assert_eq!(resident_kb(&path), 0);
    // A header read, as the walk sizes a blob and finds its chain's
    // start, counts a page: it leaves one resident, never inflated.
    let before = packs.read.load(Ordering::Relaxed);
    let last = ids.last().unwrap();
    reader.header(last).unwrap().unwrap();
    assert_eq!(
        packs.read.load(Ordering::Relaxed),
        before + HEADER_READ_BYTES
    );
    assert!(resident_kb(&path) > 0);
    let before = packs.read.load(Ordering::Relaxed);
    reader.chain_start(last).unwrap();
    let steps = packs.read.load(Ordering::Relaxed) - before;
    assert!(
        steps >= HEADER_READ_BYTES && steps.is_multiple_of(HEADER_READ_BYTES),
        "{steps}"
    );
}

#[test]
fn every_version_reads_as_git_shows_it_in_any_order_and_cache_size() {
    for repack in [
        &["repack"][..],
        &["-c", "repack.useDeltaBaseOffset=false", "repack"],
    ] {
        let (tmp, ids) = repo(repack);
        let (ofs, refs) = headers(tmp.path());
        // The pack is what the test is about: long chains of the one kind.
        if repack.len() == 1 {
            assert!(
                ofs > 100 && refs == 0,
                "{ofs} ofs-deltas, {refs} ref-deltas"
            );
        } else {
            assert!(
                refs > 100 && ofs == 0,
                "{ofs} ofs-deltas, {refs} ref-deltas"
            );
        }
        let want = shown(tmp.path(), &ids);
        // Each one's size without reading it: from its entry's header, or from the
        // first bytes of a delta's instructions.
        let packs = Arc::new(Packs::open(&tmp.path().join("objects")));
        let mut reader = PackReader::new(packs, 0, 0);
        let mut deltas = 0;
        for oid in &ids {
            let (kind, size) = reader.header(oid).unwrap().unwrap();
            assert_eq!(size, want[oid].len() as u64, "{oid}");
            match kind {
                None => deltas += 1,
                Some(kind) => assert_eq!(kind, Kind::Blob, "{oid}"),
            }
        }
        assert!(
            deltas > 100 && deltas < ids.len(),
            "{deltas} of {}",
            ids.len()
        );
        let reversed: Vec<Oid> = ids.iter().rev().copied().collect();
        // Where each chain starts, as git's own verify-pack shows it (each
        // object's offset and delta base), asked in both orders: the second
        // time through, every answer comes from what the first remembered.
        let idx = std::fs::read_dir(tmp.path().join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "idx"))
            .unwrap();
        let verified = git(
            tmp.path(),
            &["verify-pack", "-v", idx.to_str().unwrap()],
            None,
        );
        let mut at: HashMap<Oid, (u64, Option<Oid>)> = HashMap::new();
        for line in String::from_utf8(verified).unwrap().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let Some(oid) = Oid::from_hex(f[0].as_bytes()) {
                let base = f.get(6).map(|b| Oid::from_hex(b.as_bytes()).unwrap());
                at.insert(oid, (f[4].parse().unwrap(), base));
            }
        }
        let start = |mut oid: Oid| loop {
            match at[&oid] {
                (_, Some(base)) => oid = base,
                (offset, None) => return chain_key(0, offset),
            }
        };
        let starts: std::collections::HashSet<u64> = ids.iter().map(|&o| start(o)).collect();
        assert!(
            starts.len() >= 2 && starts.len() < ids.len() / 10,
            "{starts:?}"
        );
        for oid in ids.iter().chain(&reversed) {
            assert_eq!(reader.chain_start(oid), Some(start(*oid)), "{oid}");
        }
        // 4 KiB keeps no large version: with both caches that small,
        // every chain is rebuilt from the start; with only the whole
        // objects kept, from the kept start; with only the rebuilt ones,
        // the large whole object goes with them.
        let (small, large) = (4 << 10, 16 << 20);
        for cache in [
            (small, small),
            (small, large),
            (large, small),
            (large, large),
        ] {
            check(tmp.path(), &ids, &want, cache);
            check(tmp.path(), &reversed, &want, cache);
        }
    }
}

#[test]
fn an_object_outside_the_packs_is_left_to_the_caller() {
    let (tmp, ids) = repo(&["repack"]);
    let d = tmp.path();
    let loose = git(d, &["hash-object", "-w", "--stdin"], Some(b"loose\n"));
    let loose = Oid::from_hex(loose.trim_ascii()).unwrap();
    let mut reader = PackReader::new(Arc::new(Packs::open(&d.join("objects"))), 1 << 20, 1 << 20);
    let mut buf = Vec::new();
    assert_eq!(reader.read(&loose, &mut buf), Ok(None));
    assert_eq!(reader.header(&loose), Ok(None));
    assert_eq!(reader.read(&ids[0], &mut buf), Ok(Some(Kind::Blob)));
}

#[test]
fn a_damaged_delta_is_an_error_and_the_reader_goes_on() {
    let (tmp, ids) = repo(&["repack"]);
    let d = tmp.path();
    let packs = Packs::open(&d.join("objects"));
    let (index, pack) = &packs.packs[0];
    // The oldest small version: a delta, deep in its chain.
    let victim = ids[0];
    let offset = index.pack_offset_at_index(index.lookup(victim.as_gix()).unwrap());
    let entry = pack.entry(offset).unwrap();
    assert!(entry.header.is_delta());
    let path = pack.path().to_path_buf();
    drop(packs);
    let mut bytes = std::fs::read(&path).unwrap();
    // Past zlib's two-byte header: the deflate stream itself.
    for b in &mut bytes[entry.data_offset as usize + 2..entry.data_offset as usize + 6] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, bytes).unwrap();
    let mut reader = PackReader::new(Arc::new(Packs::open(&d.join("objects"))), 1 << 20, 1 << 20);
    let mut buf = Vec::new();
    let err = reader.read(&victim, &mut buf).unwrap_err();
    assert!(err.contains("decompress"), "{err}");
    let last = *ids.last().unwrap();
    assert_eq!(reader.read(&last, &mut buf), Ok(Some(Kind::Blob)));
    assert_eq!(buf, git(d, &["cat-file", "blob", &last.to_string()], None));
}

/// The leading objects of a pack git wrote are its commits, in the pack's order, by
/// its reverse index or, without one, by sorting the offsets.
#[test]
fn the_front_of_a_pack_git_wrote_holds_its_commits() {
    for rev in ["true", "false"] {
        let (tmp, _) = repo(&["-c", &format!("pack.writeReverseIndex={rev}"), "repack"]);
        let dir = tmp.path().join("objects");
        let packs = Packs::open(&dir);
        let (index, _) = &packs.packs[0];
        assert_eq!(reverse_index(index).is_some(), rev == "true");
        let mut by_offset: Vec<(u64, u32)> = (0..index.num_objects())
            .map(|i| (index.pack_offset_at_index(i), i))
            .collect();
        by_offset.sort_unstable();
        if let Some(rev) = reverse_index(index) {
            assert!(rev.eq(by_offset.iter().map(|&(_, i)| i)));
        }
        let log = git(tmp.path(), &["rev-list", "main"], None);
        let mut commits: Vec<Oid> = String::from_utf8(log)
            .unwrap()
            .lines()
            .map(|l| Oid::from_hex(l.as_bytes()).unwrap())
            .collect();
        let mut leading = packs.leading_objects();
        assert_eq!(leading.len(), VERSIONS, "{rev}");
        leading.sort();
        commits.sort();
        assert_eq!(leading, commits, "{rev}");
    }
}
