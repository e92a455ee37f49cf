//! How the session classifies what ended an ask into a typed [`SessionError`] (the
//! type itself is in [`crate::protocol`], at the bottom of the core, so that lower
//! layers can return it).

pub use crate::protocol::{disk_full, storage_message, ErrorInfo, SessionError};

impl SessionError {
    /// Classify what ended an ask: the provider's typed error when the chain holds
    /// one, else the side the loop named ([`crate::agent::Failed`]), else a full disk
    /// (told by the operating system's error kind), else `Internal`: a failure no type
    /// names is not said to be the disk's.
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
            (None, None) if disk_full(e) => SessionError::Storage {
                message: storage_message(e),
            },
            (None, None) => SessionError::Internal { message },
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
        // Words alone make no code: an error that says "the model failed" or "disk".
        let words = anyhow::anyhow!("the model failed to be saved on the disk");
        assert_eq!(SessionError::from_failure(&words).code(), "internal");
        // The transcript's own failure is typed where it happens (the session's host).
        let typed = anyhow::Error::new(SessionError::storage(anyhow::anyhow!("read-only")));
        assert_eq!(SessionError::from_failure(&typed).code(), "storage");
        // A full disk is told by the operating system's error kind.
        let full = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::StorageFull))
            .context("appending to the transcript");
        let e = SessionError::from_failure(&full);
        assert_eq!(e.code(), "storage");
        assert!(e.to_string().starts_with("the disk is full"), "{e}");
    }
}
