//! What a shell completes for a target or a workload spec: the filesystems and each of their keys
//! (`ext4`, `ext4:inodes=`), the workloads and block presets. The parsers accept any text (the
//! spec parsers check it); the values only feed completion (hidden from `--help`).

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};

/// A target spec (`FS[:KEY[=VALUE],...]`) or a workload spec, as written.
#[derive(Clone, Copy, Debug)]
pub enum Spec {
    Target,
    Workload,
}

impl Spec {
    fn words(self) -> Vec<String> {
        match self {
            Spec::Target => {
                let mut out = Vec::new();
                for d in crate::provision::FILESYSTEMS {
                    let fs = d.schema.name;
                    out.push(fs.to_string());
                    for k in d.schema.all_keys() {
                        let eq = if matches!(k.value, crate::plan::spec::ValueKind::Flag) {
                            ""
                        } else {
                            "="
                        };
                        out.push(format!("{fs}:{}{eq}", k.name));
                    }
                }
                out
            }
            Spec::Workload => crate::workload::WORKLOADS
                .iter()
                .map(|w| w.name.to_string())
                .chain(
                    crate::workload::presets::PRESETS
                        .iter()
                        .map(|p| p.name.to_string()),
                )
                .collect(),
        }
    }
}

impl TypedValueParser for Spec {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.words().into_iter().map(PossibleValue::new)))
    }
}
