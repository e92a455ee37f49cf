//! Errors as they cross into a front end: `{code, message}`, the code read from the
//! typed error in the chain (never from the message's words), the message a sentence.

use serde::Serialize;

pub use crate::protocol::ErrorCode;
use crate::protocol::SessionError;

/// What a front end shows and branches on: a typed [`ErrorCode`] (serialized as the
/// strings the page reads: `session_busy`, `not_found`, `refused_path`, ...) and the
/// sentence for the person.
#[derive(Clone, Debug, PartialEq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    /// A request the front end should not have sent as it is (a relative path, an
    /// empty list): said in words for the person.
    pub fn bad_input(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::BadInput, message)
    }
}

pub use crate::run::Cancelled;

/// The code of the first typed error in `e`'s chain; `Internal` when none has one.
pub fn code_of(e: &anyhow::Error) -> ErrorCode {
    e.chain()
        .find_map(|c| {
            if let Some(s) = c.downcast_ref::<SessionError>() {
                Some(s.code())
            } else if c.downcast_ref::<Error>().is_some() {
                None // its own code is taken below
            } else if c.is::<Cancelled>() {
                Some(ErrorCode::Cancelled)
            } else if c.is::<crate::api::files::Refused>() {
                Some(ErrorCode::RefusedPath)
            } else if c.is::<crate::sandbox::custom::PackageError>()
                || c.is::<crate::explore::BadInput>()
            {
                Some(ErrorCode::BadInput)
            } else {
                None
            }
        })
        .unwrap_or(ErrorCode::Internal)
}

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Error {
        if let Some(own) = e.downcast_ref::<Error>() {
            return own.clone();
        }
        Error {
            code: code_of(&e),
            message: sentence(&e),
        }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Error {
        Error {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// The outermost message, and the root cause when it adds something.
fn sentence(e: &anyhow::Error) -> String {
    let top = e.to_string();
    let root = e.root_cause().to_string();
    if root == top || top.contains(&root) {
        top
    } else {
        format!("{top} ({root})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_comes_from_the_typed_error_not_the_words() {
        let busy = SessionError::SessionBusy {
            id: "x".into(),
            owner: "sandalyst ask, pid 1".into(),
        };
        let e = anyhow::Error::new(busy.clone()).context("cannot ask");
        let api = Error::from(e);
        assert_eq!(api.code, "session_busy");
        assert_eq!(api.message, format!("cannot ask ({busy})"));
        // Words that look like a code do not make one.
        let words = Error::from(anyhow::anyhow!("session_busy: not really"));
        assert_eq!(words.code, ErrorCode::Internal);
        assert_eq!(
            Error::from(anyhow::Error::new(Cancelled)).code,
            ErrorCode::Cancelled
        );
        let json = serde_json::to_value(Error::from(SessionError::Busy)).unwrap();
        assert_eq!(json["code"], "busy");
        assert!(json["message"]
            .as_str()
            .unwrap()
            .contains("already running"));
    }
}
