//! buffer_pattern and verify_pattern values with a `'file'` piece: the file read when the job
//! runs or is checked (from the current directory, as fio reads it), its bytes put in the job.

use super::Block;
use crate::frame::RunError;
use crate::plan::fio::pattern::parse_pattern_with;

/// The block with its pattern files read, when a job names one.
pub fn load(b: &Block) -> Result<Option<Block>, RunError> {
    if b.jobs.iter().all(|j| j.pattern_src.is_empty()) {
        return Ok(None);
    }
    let read = |name: &str| std::fs::read(name);
    let mut out = b.clone();
    for job in &mut out.jobs {
        for (key, value) in job.pattern_src.clone() {
            let bytes = parse_pattern_with(&key, &value, Some(&read))
                .map_err(|e| RunError::Invalid(format!("job '{}': {e}", job.name)))?;
            match (key.as_str(), job.verify.as_mut()) {
                ("verify_pattern", Some(v)) => v.pattern = bytes,
                _ => job.buffer_pattern = bytes,
            }
        }
    }
    Ok(Some(out))
}
