//! `--profile[=on-cpu|off-cpu|both]`: which call-chain profiles every measured phase records
//! (the sampling itself is `crate::profile`). Plain data, saved in the plan's overrides.

use serde::{Deserialize, Serialize};

/// Which profiles are taken of each measured phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileMode {
    /// Where the threads ran: call chains sampled on a clock while they are on a CPU.
    OnCpu,
    /// Where the threads blocked: the call chain at each switch off the CPU, weighted by the
    /// time until the thread ran again.
    OffCpu,
    Both,
}

/// What `--profile` alone means.
pub const PROFILE_DEFAULT: &str = "on-cpu";

impl ProfileMode {
    pub fn on_cpu(self) -> bool {
        matches!(self, ProfileMode::OnCpu | ProfileMode::Both)
    }

    pub fn off_cpu(self) -> bool {
        matches!(self, ProfileMode::OffCpu | ProfileMode::Both)
    }

    pub fn name(self) -> &'static str {
        match self {
            ProfileMode::OnCpu => "on-cpu",
            ProfileMode::OffCpu => "off-cpu",
            ProfileMode::Both => "both",
        }
    }
}

impl std::fmt::Display for ProfileMode {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ProfileMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "on-cpu" => Ok(ProfileMode::OnCpu),
            "off-cpu" => Ok(ProfileMode::OffCpu),
            "both" => Ok(ProfileMode::Both),
            _ => Err(format!(
                "--profile={s}: say on-cpu (where the threads ran), off-cpu (where they blocked) or both"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_mode_reads_and_says_itself_back() {
        for m in [ProfileMode::OnCpu, ProfileMode::OffCpu, ProfileMode::Both] {
            assert_eq!(m.to_string().parse::<ProfileMode>().unwrap(), m);
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{m}\""));
        }
        assert_eq!(PROFILE_DEFAULT.parse(), Ok(ProfileMode::OnCpu));
        assert!(ProfileMode::Both.on_cpu() && ProfileMode::Both.off_cpu());
        assert!(!ProfileMode::OnCpu.off_cpu() && !ProfileMode::OffCpu.on_cpu());
        let e = "cpu".parse::<ProfileMode>().unwrap_err();
        assert!(e.contains("on-cpu") && e.contains("off-cpu"), "{e}");
    }
}
