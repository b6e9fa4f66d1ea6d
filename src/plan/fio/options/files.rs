//! Several files per job: fio's `filename=a:b:c`, `nrfiles` and `file_service_type`.

use super::R;
use crate::plan::job::{FileService, FileServiceKind, Job};

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
pub(super) fn file_service(v: &str) -> R<FileService> {
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
