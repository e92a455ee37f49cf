//! How the session classifies what ended an ask into a typed [`SessionError`] (the
//! type itself is in [`crate::protocol`], at the bottom of the core, so that lower
//! layers can return it).

pub use crate::protocol::{disk_full, storage_message, ErrorInfo, SessionError};

impl SessionError {
    /// Classify what ended an ask: the provider's typed error when the chain holds
    /// one, else a failure of the sandbox or of the disk.
    pub fn from_failure(e: &anyhow::Error) -> SessionError {
        use crate::model::error::ModelError;
        let message = format!("{e:#}");
        if let Some(m) = e.downcast_ref::<SessionError>() {
            return m.clone();
        }
        match e.downcast_ref::<ModelError>() {
            Some(ModelError::Auth { .. }) => SessionError::ModelAuth { message },
            Some(ModelError::ContextTooLong { .. }) => SessionError::ContextTooLong { message },
            Some(_) => SessionError::Model { message },
            None if message.starts_with("the model failed") => SessionError::Model { message },
            None if message.starts_with("the sandbox failed") => SessionError::Sandbox { message },
            None => SessionError::Storage {
                message: storage_message(e),
            },
        }
    }
}
