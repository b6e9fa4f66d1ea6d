//! Where records go: appended and flushed to the study at once, and kept for the report.

use crate::store::{Record, StoreError, Study};

pub struct Sink {
    pub study: Option<Study>,
    pub records: Vec<Record>,
}

impl Sink {
    pub fn save(&mut self, rec: Record) -> Result<(), StoreError> {
        if let Some(s) = self.study.as_mut() {
            s.append(&rec)?;
        }
        self.records.push(rec);
        Ok(())
    }
}
