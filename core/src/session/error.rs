//! How the session classifies what ended an ask into a typed [`SessionError`] (the
//! type itself is in [`crate::protocol`], at the bottom of the core, so that lower
//! layers can return it).

pub use crate::protocol::{disk_full, storage_message, ErrorInfo, SessionError};

impl SessionError {
    /// Classify what ended an ask: the provider's typed error when the chain holds
    /// one, else the side the loop named ([`crate::agent::Failed`]), else the disk.
    pub fn from_failure(e: &anyhow::Error) -> SessionError {
        use crate::model::error::ModelError;
        let message = format!("{e:#}");
        if let Some(m) = e.downcast_ref::<SessionError>() {
            return m.clone();
        }
        use crate::agent::Failed;
        match (e.downcast_ref::<ModelError>(), e.downcast_ref::<Failed>()) {
            (Some(ModelError::Auth { .. }), _) => SessionError::ModelAuth { message },
            (Some(ModelError::ContextTooLong { .. }), _) => {
                SessionError::ContextTooLong { message }
            }
            (Some(_), _) | (None, Some(Failed::Model)) => SessionError::Model { message },
            (None, Some(Failed::Sandbox)) => SessionError::Sandbox { message },
            (None, None) => SessionError::Storage {
                message: storage_message(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Failed;

    #[test]
    fn a_failure_is_typed_by_the_side_that_failed_not_by_its_words() {
        let model = anyhow::anyhow!("the provider is down").context(Failed::Model);
        assert_eq!(SessionError::from_failure(&model).code(), "model");
        assert_eq!(
            SessionError::from_failure(&model).to_string(),
            "the model failed: the provider is down"
        );
        let sandbox = anyhow::anyhow!("the engine stopped").context(Failed::Sandbox);
        assert_eq!(SessionError::from_failure(&sandbox).code(), "sandbox");
        // Words alone make no code: a disk error that says "the model failed".
        let words = anyhow::anyhow!("the model failed to be saved");
        assert_eq!(SessionError::from_failure(&words).code(), "storage");
    }
}
