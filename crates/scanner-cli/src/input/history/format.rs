//! A commit's author fields as `git rev-list --format=%an%x00%ae%x00%aI%x00%s` prints them,
//! read from the raw commit object in-process.
//!
//! # What git does (2.47: `pretty.c`, `ident.c`, `date.c`)
//!
//! 1. The object is a C string to git: it ends at its first NUL byte.
//! 2. `--encoding=UTF-8`: a commit whose first `encoding` header does not name UTF-8 is
//!    converted with iconv (or printed verbatim where iconv fails); one naming UTF-8 (`utf-8`
//!    or `utf8`, any case) or none at all is printed as its raw bytes.
//! 3. The header runs up to the first empty line. Of its lines that start with `author `,
//!    the last wins (continuation lines start with a space, so a `gpgsig` or `mergetag`
//!    never contributes one).
//! 4. The ident splits at the first `<` and the first `>` after it: the name is what comes
//!    before the `<` less trailing white space, the e-mail what lies between. The date
//!    follows the last `>`: decimal seconds since the epoch and a `+HHMM`/`-HHMM` zone.
//! 5. `%aI` shows that instant in the author's own zone, `YYYY-MM-DDTHH:MM:SS+HH:MM`, with
//!    `Z` for a zero offset (`+0000` or `-0000`; git before 2.45 printed `+00:00`). A date
//!    that overflows prints as the epoch; one before the epoch once shifted by its zone
//!    makes git die. So the walk never asks git for `%aI`: it asks for the raw date
//!    (`%ad`, `--date=raw`, which git always prints) and shows it with [`date`], as `%aI`
//!    would where git can.
//! 6. `%s` skips the blank lines after the header and joins the lines of the first
//!    paragraph with one space, each stripped of trailing white space. A blank line is one of
//!    nothing but white space, which for git is space, tab, CR and LF (its own `isspace`).
//!
//! [`author_fields`] reproduces the ordinary cases and answers `None` for the rest, where a
//! caller asks git; see its docs for the list.

/// The author's name, e-mail and date and the subject of a commit, as git prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AuthorFields {
    /// `%an`.
    pub(super) name: String,
    /// `%ae`.
    pub(super) email: String,
    /// `%aI`: strict ISO 8601 in the author's own zone, `2005-04-07T22:13:13+02:00`.
    pub(super) date: String,
    /// `%s`: the first paragraph of the message, on one line.
    pub(super) summary: String,
}

/// What `git rev-list --no-color --encoding=UTF-8 --format=%an%x00%ae%x00%aI%x00%s` prints
/// for the commit object `raw` (the bytes `git cat-file commit ID` prints), each field
/// decoded by `String::from_utf8_lossy`, as git 2.47 prints them.
///
/// `None` wherever git might print anything else, or where this is not certain to match:
/// - a NUL byte anywhere (git would stop reading there);
/// - an `encoding` header that is not `utf-8` or `utf8` (any case): git converts;
/// - a header not ended by a newline (no message, and no final newline);
/// - no `author` line, or more than one;
/// - an author line other than `NAME <EMAIL> SECONDS ±HHMM` followed by the end of the
///   line: no `<` or no `>` after it, not exactly one space before and after the seconds,
///   no zone, a zone of other than four digits or with minutes over 59, anything after it
///   (a CR included);
/// - a date before 1970 or after 9999 once shifted to its zone (git dies, or prints the
///   epoch, or a year of five digits).
pub(super) fn author_fields(raw: &[u8]) -> Option<AuthorFields> {
    if raw.contains(&0) {
        return None;
    }
    let (header, message) = split_header(raw)?;
    let ident = author_line(header)?;
    let (name, email, when) = split_ident(ident)?;
    Some(AuthorFields {
        name: String::from_utf8_lossy(name).into_owned(),
        email: String::from_utf8_lossy(email).into_owned(),
        date: iso_strict(when.strip_prefix(b" ")?)?,
        summary: String::from_utf8_lossy(&subject(message)).into_owned(),
    })
}

/// A date as `git rev-list --date=raw --format=%ad` prints it (`SECONDS ±HHMM`), shown as
/// `%aI` shows it where git can ([`author_fields`]' dates, and every date git lists); else
/// the same instant in UTC where that lies from 1970 to 9999 (git's `%aI` dies on a date
/// before the epoch once shifted to its zone, `0 -0100`, and one such commit stopped the
/// whole listing); else empty.
///
/// The walk asks git for raw dates and shows them itself: git never dies on one, and the
/// report says `Z` for UTC whatever git is installed (before 2.45, `%aI` printed
/// `+00:00`).
pub(super) fn date(raw: &[u8]) -> String {
    let when = raw.trim_ascii();
    iso_strict(when)
        .or_else(|| {
            let seconds = when.split(|&b| b == b' ').next()?;
            iso_strict(&[seconds, b" +0000"].concat())
        })
        .unwrap_or_default()
}

/// git's `isspace`: space, tab, LF and CR (not VT nor FF).
fn is_git_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|&b| !is_git_space(b))
        .map_or(0, |i| i + 1);
    &line[..end]
}

/// The header (its lines, each with its newline) and the message after the empty line
/// that ends it. A commit without a message has its header end at the end of the object,
/// which must then end with a newline: git would read past it otherwise.
fn split_header(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut start = 0;
    while start < raw.len() {
        let end = raw[start..].iter().position(|&b| b == b'\n')? + start;
        if end == start {
            return Some((&raw[..start], &raw[start + 1..]));
        }
        start = end + 1;
    }
    Some((raw, &[]))
}

/// The author's ident: what follows `author ` on the header's only author line. `None`
/// when there is none, or several (git 2.47 shows the last; which one is no contract),
/// or when an `encoding` header names other than UTF-8. Continuation lines (of a `gpgsig`
/// or `mergetag`) start with a space and match neither.
fn author_line(header: &[u8]) -> Option<&[u8]> {
    let mut author = None;
    for line in header.split(|&b| b == b'\n') {
        if let Some(ident) = line.strip_prefix(b"author ") {
            if author.replace(ident).is_some() {
                return None;
            }
        } else if let Some(name) = line.strip_prefix(b"encoding ") {
            let name = name.to_ascii_lowercase();
            if name != b"utf-8" && name != b"utf8" {
                return None;
            }
        }
    }
    author
}

/// `NAME <EMAIL> REST` split as git splits it: the name before the first `<` less trailing
/// white space, the e-mail up to the first `>` after it, and what follows that `>`.
fn split_ident(ident: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let lt = ident.iter().position(|&b| b == b'<')?;
    let gt = ident[lt + 1..].iter().position(|&b| b == b'>')? + lt + 1;
    Some((trim_end(&ident[..lt]), &ident[lt + 1..gt], &ident[gt + 1..]))
}

/// The last second of 9999-12-31, the last that `%04d` prints in four digits.
const LAST_SECOND: i64 = 253_402_300_799;

/// `SECONDS ±HHMM` (what follows the e-mail's `>` and one space) as `%aI`: the instant in
/// its own zone.
fn iso_strict(when: &[u8]) -> Option<String> {
    let (seconds, zone) = when.split_at(when.len().checked_sub(6)?);
    let zone = zone.strip_prefix(b" ")?;
    if seconds.is_empty() || !seconds.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let seconds = seconds.iter().try_fold(0i64, |n, &d| {
        n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    })?;
    let [sign @ (b'+' | b'-'), h1, h2, m1, m2] = *zone else {
        return None;
    };
    let digit = |d: u8| d.is_ascii_digit().then(|| i64::from(d - b'0'));
    let (hours, minutes) = (digit(h1)? * 10 + digit(h2)?, digit(m1)? * 10 + digit(m2)?);
    if minutes > 59 {
        return None;
    }
    let offset = (hours * 60 + minutes) * 60;
    let local = if sign == b'+' {
        seconds + offset
    } else {
        seconds - offset
    };
    if !(0..=LAST_SECOND).contains(&local) {
        return None;
    }
    let (year, month, day) = civil_date(local / 86_400);
    let time = local % 86_400;
    let mut out = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        time / 3600,
        time / 60 % 60,
        time % 60
    );
    if offset == 0 {
        out.push('Z');
    } else {
        out.push_str(&format!("{}{hours:02}:{minutes:02}", sign as char));
    }
    Some(out)
}

/// The proleptic Gregorian (year, month, day) of `days` days after 1970-01-01 (`days` >= 0).
///
/// Counted in years that start on March 1st, so that a leap day ends its year, and in
/// 400-year cycles of 146,097 days. Within a cycle, the leap days before a day are one every
/// 1,460 days (4 years of 365) less one every 36,524 (100 years), plus the cycle's last day:
/// taking them away leaves 365-day years to divide by.
fn civil_date(days: i64) -> (i64, i64, i64) {
    // 1970-01-01 is day 719,468 counted from 0000-03-01.
    let days = days + 719_468;
    let (cycle, day_of_cycle) = (days / 146_097, days % 146_097);
    let year_of_cycle =
        (day_of_cycle - day_of_cycle / 1460 + day_of_cycle / 36_524 - day_of_cycle / 146_096) / 365;
    let day_of_year =
        day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 - year_of_cycle / 100);
    // Months from March: 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 28/29 days, which
    // (153 * m + 2) / 5 counts for the first m of them.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = cycle * 400 + year_of_cycle + i64::from(month <= 2);
    (year, month, day)
}

/// `%s`: after the blank lines that follow the header, the lines up to the next blank line
/// (or the end), each stripped of trailing white space, joined by one space.
fn subject(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let lines = message.split_inclusive(|&b| b == b'\n').map(trim_end);
    for line in lines
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
    {
        if !out.is_empty() {
            out.push(b' ');
        }
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use crate::input::test_git::git_with_input as run;
    use std::io::Write;

    /// git's `%an`, `%ae`, `%aI`, `%s`, as bytes.
    type GitFields = [Vec<u8>; 4];

    const FORMAT: &str = "--format=%an%x00%ae%x00%aI%x00%s%x00";

    /// Writes each of `raws` as a commit object into a new bare repository at `repo` (with
    /// the empty tree they name); their ids, one a line.
    fn write_commits(repo: &Path, raws: &[&[u8]]) -> Vec<u8> {
        run(repo, &["init", "-q", "--bare"], b"").unwrap();
        run(repo, &["hash-object", "-t", "tree", "-w", "--stdin"], b"").unwrap();
        let mut paths = String::new();
        for (i, raw) in raws.iter().enumerate() {
            let path = repo.join(format!("commit{i}"));
            std::fs::write(&path, raw).unwrap();
            paths.push_str(&format!("{}\n", path.display()));
        }
        let write = [
            "hash-object",
            "-t",
            "commit",
            "--literally",
            "-w",
            "--stdin-paths",
        ];
        run(repo, &write, paths.as_bytes()).unwrap()
    }

    /// What `git rev-list --format` prints for each of `ids` (one a line), by commit id.
    fn git_fields(repo: &Path, ids: &[u8]) -> HashMap<String, GitFields> {
        let args = [
            "rev-list",
            "--no-walk=unsorted",
            "--stdin",
            "--no-color",
            "--encoding=UTF-8",
            FORMAT,
        ];
        let out = run(repo, &args, ids).unwrap();
        let mut fields = HashMap::new();
        let mut rest = &out[..];
        while !rest.is_empty() {
            let line = rest
                .strip_prefix(b"commit ")
                .expect("a record's first line");
            let (id, tail) = line.split_at(line.iter().position(|&b| b == b'\n').unwrap());
            rest = &tail[1..];
            let mut record: GitFields = Default::default();
            for field in &mut record {
                let end = rest.iter().position(|&b| b == 0).unwrap();
                *field = rest[..end].to_vec();
                rest = &rest[end + 1..];
            }
            rest = rest.strip_prefix(b"\n").expect("a record's last line");
            fields.insert(String::from_utf8(id.to_vec()).unwrap(), record);
        }
        fields
    }

    /// The dates git prints raw for each of `ids` (one a line), as the walk asks for them
    /// (`walk::FORMAT_ARGS`), by commit id.
    fn git_raw_dates(repo: &Path, ids: &[u8]) -> HashMap<String, Vec<u8>> {
        let args = ["rev-list", "--no-walk=unsorted", "--stdin", "--date=raw"];
        let out = run(repo, &[&args[..], &["--format=%H %ad"]].concat(), ids).unwrap();
        out.split(|&b| b == b'\n')
            .filter(|line| !line.is_empty() && !line.starts_with(b"commit "))
            .map(|line| {
                let (id, date) = line.split_at(40);
                (String::from_utf8(id.to_vec()).unwrap(), date[1..].to_vec())
            })
            .collect()
    }

    fn lossy(fields: &GitFields) -> AuthorFields {
        let s = |i: usize| String::from_utf8_lossy(&fields[i]).into_owned();
        AuthorFields {
            name: s(0),
            email: s(1),
            date: s(2),
            summary: s(3),
        }
    }

    const COMMITTER: &str = "committer C O Mitter <c@example.com> 1112911993 +0200\n";

    /// A commit object on the empty tree: `header` (the author and any other header lines,
    /// each ending in a newline), then the committer, then `rest`.
    fn object(header: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut o = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n".to_vec();
        o.extend_from_slice(header);
        o.extend_from_slice(COMMITTER.as_bytes());
        o.extend_from_slice(rest);
        o
    }

    /// Author idents that `author_fields` reproduces: odd names and e-mails, dates, zones.
    const IDENTS: &[&str] = &[
        "A U Thor <author@example.com> 1112911993 +0200",
        " Jo \t Doe\t  <j@x> 1 +0000",
        "Zoë Ñandú 漢字 <zoë@ü.example> 1 +0000",
        "<e@x> 1 +0000",
        " \t <e@x> 1 +0000",
        "N <> 1 +0000",
        "<> 1 +0000",
        "N <a<b> 1 +0000",
        "N>x <e> 1 +0000",
        "N   <  e  > 1 +0000",
        "N<e> 1 +0000",
        "N\r <e\r> 1 +0000",
        "N <e> 0 +0000",
        "N <e> 0001112911993 +0200",
        "N <e> 253402300799 +0000",
        "N <e> 1112911993 -0000",
        "N <e> 1112911993 +1400",
        "N <e> 1112911993 -1230",
        "N <e> 1112911993 +0030",
        "N <e> 1112911993 -0030",
        "N <e> 1112911993 +0559",
        "N <e> 951782400 +0000",
        "N <e> 946681199 +0100",
    ];

    /// Author idents answered `None`: not of the ordinary shape, or a date out of range.
    const ODD_IDENTS: &[&str] = &[
        "N <e> > 1 +0000",
        "N <<e>> 1 +0000",
        "N e 1 +0000",
        "N <e 1 +0000",
        "N <e> -5 +0000",
        "N <e> 99999999999999999999 +0000",
        "N <e> 253402300800 +0000",
        "N <e> 253402300799 +0100",
        "N <e> 1112911993",
        "N <e> 1112911993 ",
        "N <e>",
        "N <e> 1112911993 0200",
        "N <e> 1112911993 +02x0",
        "N <e> 1112911993 +020",
        "N <e> 1112911993 +02000",
        "N <e> 1112911993 +0060",
        "N <e>  1112911993 +0200",
        "N <e> 1112911993\t+0200",
        "N <e> 1112911993 +0200 x",
        "N <e> 1112911993 +0200\r",
        "N\0M <e> 1 +0000",
        "",
    ];

    /// Messages (what follows the header's last newline) for the subject.
    const MESSAGES: &[&[u8]] = &[
        b"\n\n \t\r\n\n  Subject \n\nbody\n",
        b"\none\ntwo  \n\tthree\n\nb\n",
        b"\r\nsubj\r\nmore\r\n\r\nbody\r\n",
        b"\nsubject \t \t\n",
        b"\n\x0b\n\x0cs\x0c\n\x0b\n\nb",
        b"\nsubject",
        b"\n",
        b"\n\n \n\t\n",
        b"",
    ];

    /// Header lines after the author's that `author_fields` reads past.
    const HEADERS: &[&str] = &[
        "encoding UTF-8\n",
        "encoding utf8\n",
        "encoding Utf-8\n",
        "encodingUTF-16\n",
        "author-x N <n> 2 +0000\n",
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n author Fake <f@x> 1 +0000\n \
         encoding ISO-8859-1\n -----END PGP SIGNATURE-----\n",
        "mergetag object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n type commit\n tag v1\n \
         tagger T <t@x> 1 +0000\n \n author In Tag <i@x> 2 +0000\n",
    ];

    /// Header lines after the author's that make `author_fields` answer `None`.
    const ODD_HEADERS: &[&str] = &[
        "encoding utf-16\n",
        "encoding \n",
        "author B <b@b> 1 +0000\n",
    ];

    const AUTHOR: &str = "author A <a@b> 1112911993 +0200\n";

    /// (what it tests, the object, whether `author_fields` answers `None`).
    fn cases() -> Vec<(String, Vec<u8>, bool)> {
        let mut cases = Vec::new();
        for (idents, none) in [(IDENTS, false), (ODD_IDENTS, true)] {
            for ident in idents {
                let header = format!("author {ident}\n");
                let raw = object(header.as_bytes(), b"\nsubject\n");
                cases.push((format!("author {ident:?}"), raw, none));
            }
        }
        for message in MESSAGES {
            let what = format!("message {:?}", String::from_utf8_lossy(message));
            cases.push((what, object(AUTHOR.as_bytes(), message), false));
        }
        for (headers, none) in [(HEADERS, false), (ODD_HEADERS, true)] {
            for header in headers {
                let raw = object(format!("{AUTHOR}{header}").as_bytes(), b"\nsubject\n");
                cases.push((format!("header {header:?}"), raw, none));
            }
        }
        let invalid_utf8 = object(
            b"author Bj\xf6rn \xff<b\xe9@x> 1 +0000\n",
            b"\ns\xe9 \xc3\n",
        );
        let latin1 = object(
            b"author Bj\xf6rn <b@x> 1112911993 +0200\nencoding ISO-8859-1\n",
            b"\nd\xe9j\xe0 vu\n",
        );
        let nul = object(AUTHOR.as_bytes(), b"\nsub\0ject\n");
        cases.extend([
            ("invalid UTF-8".into(), invalid_utf8, false),
            ("ISO-8859-1".into(), latin1, true),
            ("no author".into(), object(b"", b"\nsubject\n"), true),
            ("NUL in the message".into(), nul, true),
        ]);
        cases
    }

    /// Every case against what git prints for it, written as a real object: `Some` exactly
    /// git's fields, `None` exactly where the case says so.
    #[test]
    fn author_fields_are_what_git_prints() {
        let cases = cases();
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        let raws: Vec<&[u8]> = cases.iter().map(|(_, raw, _)| &raw[..]).collect();
        let ids = write_commits(repo, &raws);
        let printed = git_fields(repo, &ids);
        let raw_dates = git_raw_dates(repo, &ids);
        let ids = String::from_utf8(ids).unwrap();
        assert_eq!(printed.len(), cases.len(), "one distinct commit per case");
        for ((what, raw, none), id) in cases.iter().zip(ids.lines()) {
            let git = lossy(&printed[id]);
            match author_fields(raw) {
                Some(ours) => {
                    assert!(!none, "{what}: expected None, got {ours:?}");
                    assert_eq!(ours, git, "{what}");
                    // What the walk shows when git lists this commit.
                    assert_eq!(date(&raw_dates[id]), git.date, "{what}: the raw date shown");
                }
                None => assert!(none, "{what}: None where git prints {git:?}"),
            }
        }
    }

    /// Raw dates (`SECONDS ±HHMM`, as git lists them for the walk) shown as `%aI` shows
    /// them; where git's `%aI` dies or prints no RFC 3339 date, the instant in UTC, or
    /// nothing.
    #[test]
    fn raw_dates_show_as_git_shows_them_or_in_utc() {
        let cases: &[(&[u8], &str)] = &[
            (b"1112911993 +0200", "2005-04-08T00:13:13+02:00"),
            (b"1112911993 -0000", "2005-04-07T22:13:13Z"),
            (b"951782400 -1230", "2000-02-28T11:30:00-12:30"),
            // `%aI` dies: "Timestamp before Unix epoch".
            (b"0 -0100", "1970-01-01T00:00:00Z"),
            // `%aI` prints `2005-04-07T23:13:13+00:60`.
            (b"1112911993 +0060", "2005-04-07T22:13:13Z"),
            // `%aI` prints `10000-01-01T00:59:59+01:00`.
            (b"253402300799 +0100", "9999-12-31T23:59:59Z"),
            (b"253402300800 +0000", ""),
            // An author line without a date: git prints nothing raw, and `%aI` literally.
            (b"", ""),
        ];
        for (raw, shown) in cases {
            assert_eq!(date(raw), *shown, "{}", String::from_utf8_lossy(raw));
        }
    }

    /// A few of git's answers spelled out, so that a reader sees them (the test above
    /// checks them all against git).
    #[test]
    fn dates_show_in_the_authors_zone_with_z_for_utc() {
        let date = |author: &str| {
            let raw = object(format!("author {author}\n").as_bytes(), b"\n");
            author_fields(&raw).map(|f| f.date)
        };
        let d = |s: &str| Some(s.to_string());
        assert_eq!(
            date("N <e> 1112911993 +0200"),
            d("2005-04-08T00:13:13+02:00")
        );
        assert_eq!(date("N <e> 1112911993 -0000"), d("2005-04-07T22:13:13Z"));
        assert_eq!(date("N <e> 0 +0000"), d("1970-01-01T00:00:00Z"));
        assert_eq!(
            date("N <e> 951782400 -1230"),
            d("2000-02-28T11:30:00-12:30")
        );
        assert_eq!(date("N <e> 253402300799 +0000"), d("9999-12-31T23:59:59Z"));
        let subject = |m: &[u8]| author_fields(&object(AUTHOR.as_bytes(), m)).map(|f| f.summary);
        assert_eq!(subject(b"\n \r\n one \t\r\ntwo\n\nthree"), d(" one two"));
    }

    /// Every day from 1970-01-01 to 9999-12-31, counted one by one.
    #[test]
    fn civil_date_counts_every_day_to_9999() {
        let leap = |y: i64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let month_days = |y, m| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut date = (1970, 1, 1);
        for days in 0..=LAST_SECOND / 86_400 {
            assert_eq!(civil_date(days), date, "day {days}");
            let (y, m, d) = date;
            date = if d < month_days(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
        assert_eq!(date, (10000, 1, 1));
    }

    /// Objects git cannot print: `%aI` dies on a date before the epoch in its zone (the raw
    /// date the walk asks for does not), and git reads past the end of a header that ends
    /// without a newline (so it is not asked).
    #[test]
    fn no_fields_where_git_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        let before_epoch = object(b"author N <e> 0 -0100\n", b"\nsubject\n");
        let id = write_commits(repo, &[&before_epoch]);
        let args = ["rev-list", "--no-walk", "--stdin", "--no-color", FORMAT];
        let err = run(repo, &args, &id).unwrap_err();
        assert!(err.contains("Timestamp before Unix epoch"), "{err}");
        assert_eq!(author_fields(&before_epoch), None);
        // Raw, as the walk asks, git lists it.
        let raw = &git_raw_dates(repo, &id)[String::from_utf8_lossy(&id).trim()];
        assert_eq!(raw, b"0 -0100");
        assert_eq!(date(raw), "1970-01-01T00:00:00Z");
        let mut unended = object(AUTHOR.as_bytes(), b"");
        unended.pop();
        assert_eq!(author_fields(&unended), None);
    }

    /// Every commit of the repository named by `SCANNER_FORMAT_REPO` against what git
    /// prints for it: no `Some` may differ. Prints the counts, and the author and encoding
    /// lines of the first commits answered `None`.
    #[test]
    #[ignore = "needs a large real repository: SCANNER_FORMAT_REPO=path"]
    fn author_fields_are_what_git_prints_for_a_whole_repository() {
        let repo = std::env::var_os("SCANNER_FORMAT_REPO").expect("SCANNER_FORMAT_REPO=path");
        let repo = Path::new(&repo);
        let ids = run(repo, &["rev-list", "--all"], b"").unwrap();
        let printed = git_fields(repo, &ids);
        let mut cat = git(repo)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = cat.stdin.take().unwrap();
        let writer = thread::spawn(move || stdin.write_all(&ids));
        let mut objects = BufReader::new(cat.stdout.take().unwrap());
        let (mut commits, mut mismatches, mut nones) = (0, 0, 0);
        let (mut line, mut raw) = (String::new(), Vec::new());
        while objects.read_line(&mut line).unwrap() > 0 {
            let [id, kind, size] = line.split_whitespace().collect::<Vec<_>>()[..] else {
                panic!("cat-file: {line}");
            };
            assert_eq!(kind, "commit", "{id}");
            raw.resize(size.parse::<usize>().unwrap() + 1, 0);
            objects.read_exact(&mut raw).unwrap();
            raw.pop();
            commits += 1;
            let git = lossy(&printed[id]);
            match author_fields(&raw) {
                Some(ours) if ours != git => {
                    mismatches += 1;
                    eprintln!("{id}: ours {ours:?}\n{id}: git  {git:?}");
                }
                Some(_) => {}
                None => {
                    nones += 1;
                    let lines = raw.split(|&b| b == b'\n').take_while(|l| !l.is_empty());
                    for l in lines.filter(|l| l.starts_with(b"author") || l.starts_with(b"enc")) {
                        if nones <= 40 {
                            eprintln!("{id}: None: {:?}", String::from_utf8_lossy(l));
                        }
                    }
                }
            }
            line.clear();
        }
        writer.join().unwrap().unwrap();
        assert!(cat.wait().unwrap().success());
        eprintln!("{commits} commits, {mismatches} mismatches, {nones} None");
        assert_eq!(commits, printed.len());
        assert_eq!(mismatches, 0);
    }
}
