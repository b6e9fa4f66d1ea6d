//! Where a job's I/O goes: its files (one, several per worker with `filename=a:b` or nrfiles,
//! and how a worker moves between them), their size and region, what is done to them before and
//! after (created, laid out, dropped from the cache, deleted), the access advice, strided zones.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::job::Fadvise;
use crate::plan::job::{FileService, FileServiceKind, Job};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Target, name, help, example, apply)
}

/// What fsbench says of an option about laying a file out: it lays it out its own way.
fn lays_out(a: Arg) -> R<Got> {
    Ok(Noted(format!(
        "{}={}: fsbench lays a job's file out with data before its first phase (as fio's overwrite=1), whatever this says",
        a.key,
        a.value.unwrap_or("1")
    )))
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("filename", &[]),
        "the job's file or device (several: a:b:c)",
        "data",
        |j, a| {
            j.set_filenames(a.need()?)?;
            Ok(Done)
        },
    ),
    opt(
        ("directory", &[]),
        "where the job's files go",
        "/mnt/test",
        |j, a| {
            let d = a.need()?;
            if d.contains(':') {
                return Err(format!("directory={d}: several directories per job are not supported by fsbench; give one").into());
            }
            j.directory = Some(d.to_string());
            Ok(Done)
        },
    ),
    opt(
        ("size", &[]),
        "bytes of the job's region (or a share: 50%)",
        "1G",
        |j, a| {
            j.size = Some(a.size(false)?);
            Ok(Done)
        },
    ),
    opt(("filesize", &[]), "each file's size", "1G", |j, a| {
        let f = a.need()?;
        let (lo, hi) = f.split_once('-').unwrap_or((f, f));
        let size = |s: &str| crate::plan::fio::values::byte_size(a.key, s);
        let (lo, hi) = (size(lo)?, size(hi)?);
        if lo != hi {
            return Err(format!(
                "filesize={f}: a range of file sizes is not supported by fsbench; give one size"
            )
            .into());
        }
        j.filesize = Some(lo);
        Ok(Done)
    }),
    opt(
        ("nrfiles", &["nr_files"]),
        "files per worker",
        "4",
        |j, a| {
            j.nrfiles = a.u32(1, 1 << 20)?;
            Ok(Done)
        },
    ),
    opt(
        ("openfiles", &[]),
        "files open at once (fsbench keeps them all open)",
        "1",
        |_, a| {
            a.u32(1, u32::MAX)?;
            Ok(Noted(format!("openfiles={}: fsbench opens all of a worker's files when it starts and keeps them open (fio closes and opens files to stay within openfiles)", a.shown())))
        },
    ),
    opt(
        ("file_service_type", &[]),
        "how a worker moves between its files",
        "roundrobin",
        |j, a| {
            j.file_service = file_service(a.need()?)?;
            Ok(Done)
        },
    ),
    opt(
        ("offset", &["fileoffset"]),
        "where the region starts in the file",
        "1G",
        |j, a| {
            j.offset = Some(a.size(true)?);
            Ok(Done)
        },
    ),
    opt(
        ("offset_increment", &[]),
        "each worker's region further on by this",
        "1G",
        |j, a| {
            j.offset_increment = a.bytes()?;
            Ok(Done)
        },
    ),
    opt(
        ("unlink", &[]),
        "deletes the job's files when it ends",
        "1",
        |j, a| {
            j.unlink = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("invalidate", &[]),
        "drops the files' cached pages before the job",
        "1",
        |j, a| {
            j.invalidate = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("allow_file_create", &[]),
        "may create its files",
        "1",
        |j, a| {
            j.allow_file_create = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("create_on_open", &[]),
        "creates files when opened (fsbench lays them out first)",
        "1",
        |_, a| {
            a.bool()?;
            lays_out(a)
        },
    ),
    opt(
        ("overwrite", &[]),
        "writes the file out first (fsbench always does)",
        "1",
        |_, a| {
            a.bool()?;
            lays_out(a)
        },
    ),
    opt(
        ("fallocate", &[]),
        "how the file is preallocated (fsbench writes it out)",
        "none",
        |_, a| match a.need()? {
            "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => lays_out(a),
            o => {
                Err(format!("fallocate={o}: expected none, native, posix, keep or truncate").into())
            }
        },
    ),
    opt(
        ("create_serialize", &[]),
        "lays files out one after another (fsbench does)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Noted("create_serialize: fsbench lays out every job's file one after another before the phase starts, whatever this says".into()))
        },
    ),
    opt(
        ("fadvise_hint", &[]),
        "the access advice given when the files open",
        "1",
        |j, a| {
            j.fadvise = match a.value.unwrap_or("1") {
                "1" => Fadvise::Pattern,
                "0" => Fadvise::Off,
                "sequential" => Fadvise::Sequential,
                "random" => Fadvise::Random,
                o => {
                    return Err(
                        format!("fadvise_hint={o}: expected 0, 1, sequential or random").into(),
                    )
                }
            };
            Ok(Done)
        },
    ),
    opt(
        ("zonemode", &[]),
        "none, or strided zones (zoned devices are refused)",
        "strided",
        |j, a| {
            match a.need()? {
            "none" => j.strided = false,
            "zbd" => return Err("zonemode=zbd: zoned block devices (SMR disks, ZNS SSDs) cannot be a target here: fsbench runs on files and conventional block devices, whose writes need no zone write pointer; run this job with fio on the zoned device".into()),
            "strided" => j.strided = true,
            o => return Err(format!("zonemode={o}: expected none, strided or zbd").into()),
        }
            Ok(Done)
        },
    ),
    opt(
        ("zonesize", &[]),
        "bytes done in a strided zone before the next",
        "256m",
        |j, a| {
            j.zones.size = a.bytes()?;
            Ok(Done)
        },
    ),
    opt(
        ("zonerange", &[]),
        "a strided zone's range",
        "256m",
        |j, a| {
            j.zones.range = a.bytes()?;
            Ok(Done)
        },
    ),
    opt(
        ("zoneskip", &[]),
        "bytes skipped between strided zones",
        "256m",
        |j, a| {
            j.zones.skip = a.bytes()?;
            Ok(Done)
        },
    ),
];

impl Job {
    /// fio's `filename`: one name, or several separated by `:` (`\:` is a colon in a name, as
    /// in fio).
    pub(super) fn set_filenames(&mut self, v: &str) -> R<()> {
        let names = split_names(v);
        if names.iter().any(String::is_empty) {
            return Err(format!(
                "filename={v}: an empty file name in the list; write filename=a:b:c"
            )
            .into());
        }
        let mut names = names.into_iter();
        self.filename = names.next();
        self.more_files = names.collect();
        Ok(())
    }

    /// The files of one worker: the names given (filename=a:b), else nrfiles.
    pub fn files_per_worker(&self) -> u32 {
        if self.filename.is_some() {
            1 + self.more_files.len() as u32
        } else {
            self.nrfiles.max(1)
        }
    }
}

/// `a:b\:c` -> ["a", "b:c"].
fn split_names(v: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                names.last_mut().expect("one name at least").push(':');
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("one name at least").push(c),
        }
    }
    names
}

/// fio's `file_service_type=random|roundrobin|sequential[:N]`.
fn file_service(v: &str) -> R<FileService> {
    let (kind, n) = match v.split_once(':') {
        Some((k, n)) => (k, Some(n)),
        None => (v, None),
    };
    let kind = match kind {
        "roundrobin" => FileServiceKind::Roundrobin,
        "random" => FileServiceKind::Random,
        "sequential" => FileServiceKind::Sequential,
        "zipf" | "pareto" | "normal" | "gauss" => {
            return Err(format!("file_service_type={v}: fsbench picks files uniformly (random), in turn (roundrobin) or one after another (sequential); a {kind} choice of file is not supported: use random").into())
        }
        _ => {
            return Err(format!(
                "file_service_type={v}: expected random, roundrobin or sequential (with :N, the I/Os before the next file)"
            )
            .into())
        }
    };
    let batch = match n {
        None => 1,
        Some(n) => match n.parse::<u32>() {
            Ok(b) if b >= 1 => b,
            _ => {
                return Err(format!(
                "file_service_type={v}: the I/Os per file after ':' must be a number of at least 1"
            )
                .into())
            }
        },
    };
    Ok(FileService { kind, batch })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_names_with_an_escaped_colon() {
        let mut j = Job::default();
        j.set_filenames("a:b\\:c:d").unwrap();
        assert_eq!(j.filename.as_deref(), Some("a"));
        assert_eq!(j.more_files, vec!["b:c".to_string(), "d".to_string()]);
        assert_eq!(j.files_per_worker(), 3);
        assert!(j.set_filenames("a::b").is_err());
        let mut k = Job {
            nrfiles: 4,
            ..Job::default()
        };
        assert_eq!(k.files_per_worker(), 4);
        k.set_filenames("x").unwrap();
        assert_eq!(k.files_per_worker(), 1, "the names given win over nrfiles");
    }

    #[test]
    fn file_service_types_as_fio_writes_them() {
        let f = file_service("random:4").unwrap();
        assert_eq!((f.kind, f.batch), (FileServiceKind::Random, 4));
        let f = file_service("sequential").unwrap();
        assert_eq!((f.kind, f.batch), (FileServiceKind::Sequential, 1));
        assert!(file_service("zipf:1.2").unwrap_err().0.contains("random"));
        assert!(file_service("roundrobin:0").is_err());
        assert!(file_service("often").is_err());
    }
}
