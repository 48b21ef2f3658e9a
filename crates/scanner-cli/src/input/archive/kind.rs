//! Which archive a file is: by its first bytes, else by its name.

/// Bytes [`sniff`] needs to see every magic it knows (tar's is at 257, and
/// a tar without one is told by its first header's checksum: 512 bytes).
pub const SNIFF_LEN: usize = 512;

/// Archive formats this module can open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    /// zip and its family: jar, war, whl, apk, nupkg, docx...
    Zip,
    /// uncompressed tar (ustar, GNU or pax).
    Tar,
    /// gzip: a `.tar.gz`/`.tgz`/`.crate`, or one compressed file.
    Gzip,
    /// bzip2: a `.tar.bz2`, or one compressed file.
    Bzip2,
    /// xz: a `.tar.xz`/`.txz`, or one compressed file.
    Xz,
    /// zstd: a `.tar.zst`, or one compressed file.
    Zstd,
}

/// The archive kind announced by the first bytes of a file, if any. Give it
/// at least [`SNIFF_LEN`] bytes when the file has them, or tar is missed.
pub fn sniff(head: &[u8]) -> Option<ArchiveKind> {
    // An empty zip is only an end-of-central-directory record; `PK\x07\x08`
    // starts a spanned zip whose first local header follows.
    if head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || head.starts_with(b"PK\x07\x08")
    {
        return Some(ArchiveKind::Zip);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Some(ArchiveKind::Gzip);
    }
    if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
        return Some(ArchiveKind::Bzip2);
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        return Some(ArchiveKind::Xz);
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) || super::compressed::is_zstd_skippable(head) {
        return Some(ArchiveKind::Zstd);
    }
    // POSIX writes "ustar\0", GNU "ustar  \0": the first five bytes agree.
    if head.get(257..262) == Some(b"ustar") || is_v7_tar_header(head) {
        return Some(ArchiveKind::Tar);
    }
    None
}

/// A tar header without the ustar magic (a v7 tar, `tar --format=v7`, as
/// old tarballs are): a name, a size in octal, and a checksum field whose
/// octal number is the sum of the block's bytes, that field read as spaces.
fn is_v7_tar_header(head: &[u8]) -> bool {
    let Some(block) = head.get(..512) else {
        return false;
    };
    /// The number in an octal field: digits after optional spaces, then
    /// only NULs and spaces.
    fn octal(field: &[u8]) -> Option<u64> {
        let digits = field.trim_ascii_start();
        let end = digits.iter().position(|b| !b.is_ascii_digit() || *b > b'7');
        let (digits, rest) = digits.split_at(end.unwrap_or(digits.len()));
        if digits.is_empty() || rest.iter().any(|&b| b != 0 && b != b' ') {
            return None;
        }
        digits.iter().try_fold(0u64, |n, &d| {
            n.checked_mul(8)?.checked_add(u64::from(d - b'0'))
        })
    }
    let sum: u64 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(b)
            }
        })
        .sum();
    block[0] != 0 && octal(&block[124..136]).is_some() && octal(&block[148..156]) == Some(sum)
}

/// Suffixes of the zip family: formats that are zip files under another
/// name. Matched case-insensitively.
const ZIP_SUFFIXES: &[&str] = &[
    ".zip", ".jar", ".war", ".ear", ".apk", ".aar", ".whl", ".egg", ".nupkg", ".vsix", ".xpi",
    ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".ipa",
];

/// The archive kind a name suggests. Only used when the content has no
/// magic ([`detect`]): a self-extracting zip starts with a program (a v7
/// tar, before ustar, has no magic either, but [`sniff`] tells it by its
/// header's checksum).
pub fn kind_from_name(name: &[u8]) -> Option<ArchiveKind> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    if ZIP_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        Some(ArchiveKind::Zip)
    } else if lower.ends_with(".tar") {
        Some(ArchiveKind::Tar)
    } else {
        None
    }
}

/// Whether a file that [`sniff`] does not know is a zip behind a prefix: a
/// self-extracting zip, an executable jar behind its launch script (Spring
/// Boot's). Its name is of the zip family ([`kind_from_name`]) and its end
/// holds a zip's end-of-central-directory record. `src` is left where it
/// was.
pub fn zip_behind_prefix(name: &[u8], src: &mut dyn super::ReadSeek) -> std::io::Result<bool> {
    if kind_from_name(name) != Some(ArchiveKind::Zip) {
        return Ok(false);
    }
    let at = src.stream_position()?;
    let found = super::zip_members::zip_directory(src)?.is_some();
    src.seek(std::io::SeekFrom::Start(at))?;
    Ok(found)
}

/// The archive kind of a file: by its first bytes ([`sniff`]), else by its
/// name ([`kind_from_name`]). Compressed formats are only trusted by magic: a
/// `.gz` without one is not gzip. A guess by name can be wrong: a walk that
/// then delivers nothing and records
/// [`ArchiveSkip::Corrupt`](super::ArchiveSkip::Corrupt) at the file's own
/// path should be followed by a plain scan of the file.
pub fn detect(name: &[u8], head: &[u8]) -> Option<ArchiveKind> {
    sniff(head).or_else(|| kind_from_name(name))
}
