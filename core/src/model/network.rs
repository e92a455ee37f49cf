//! The network under model calls: the HTTP client every provider uses, and what a
//! failed connection means for the person who has to fix it.
//!
//! - **Trust**: certificates are checked against what the operating system trusts
//!   (`rustls-platform-verifier`): the Keychain on macOS, the certificate store on
//!   Windows, and on Linux the system bundle, or only `SSL_CERT_FILE` / `SSL_CERT_DIR`
//!   where either is set. A company's TLS-inspecting proxy or a private CA in the OS
//!   store is trusted as the browser trusts it. The crypto is rustls on `ring`.
//! - **Proxies**: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (upper or
//!   lower case) as curl reads them, else the system's proxy settings on macOS and
//!   Windows; HTTPS goes through a proxy as a `CONNECT` tunnel, so TLS stays end to end.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! let client = sandalyst::model::network::client(std::time::Duration::from_secs(15))?;
//! let via = sandalyst::model::network::proxy_for("https://api.openai.com/v1");
//! # let _ = (client, via); Ok(()) }
//! ```

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// What to check when a server's certificate is refused.
pub const TRUST_HINT: &str = "if a company proxy or a private CA signs it, add that CA to the \
     operating system's trust store, or point SSL_CERT_FILE (a PEM file) or SSL_CERT_DIR at it";

/// The TLS settings every client shares: the verifier reads the OS trust store once per
/// process (a file read on Linux), not once per model.
fn tls() -> anyhow::Result<rustls::ClientConfig> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| format!("cannot read the trusted certificates ({e}); {TRUST_HINT}"))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        // The client speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    })
    .clone()
    .map_err(|e| anyhow::anyhow!("{e}"))
}

/// A client for model calls: the OS trust store, proxies from the environment (or the
/// system), `connect_timeout` for each connection. Clients are not shared between
/// transports: a connection pool belongs to the runtime it was made on.
pub fn client(connect_timeout: Duration) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls()?)
        .connect_timeout(connect_timeout)
        .user_agent(concat!("sandalyst/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

/// The proxy a request to `url` goes through, fit for messages (no credentials), or
/// `None` when it goes direct (no proxy set, or the host is in `NO_PROXY`). Read as the
/// client reads it.
pub fn proxy_for(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    let matcher = hyper_util::client::proxy::matcher::Matcher::from_system();
    let via = matcher.intercept(&uri)?;
    let proxy = via.uri();
    let host = proxy.host()?;
    Some(match proxy.port_u16() {
        Some(port) => format!("{}://{host}:{port}", proxy.scheme_str().unwrap_or("http")),
        None => format!("{}://{host}", proxy.scheme_str().unwrap_or("http")),
    })
}

/// The variables that name the proxy for `url`'s scheme, for messages.
pub fn proxy_variables(url: &str) -> &'static str {
    if url.starts_with("http://") {
        "HTTP_PROXY (or ALL_PROXY)"
    } else {
        "HTTPS_PROXY (or ALL_PROXY)"
    }
}

/// Whether `e` (or what caused it) is a certificate the trust store refused.
pub fn is_untrusted_certificate(e: &(dyn std::error::Error + 'static)) -> bool {
    if tls_refused(e) {
        return true;
    }
    // An `io::Error` hides what it wraps from `source()` (and TLS errors come wrapped
    // twice): look inside.
    let wrapped = e
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref());
    if wrapped.is_some_and(|inner| is_untrusted_certificate(inner)) {
        return true;
    }
    e.source().is_some_and(is_untrusted_certificate)
}

fn tls_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<rustls::Error>(),
        Some(
            rustls::Error::InvalidCertificate(_)
                | rustls::Error::AlertReceived(rustls::AlertDescription::UnknownCA)
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_errors_are_found_inside_io_errors() {
        let refused = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, refused);
        let twice = std::io::Error::other(io);
        assert!(is_untrusted_certificate(&twice));
        let other = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(!is_untrusted_certificate(&other));
        assert_eq!(
            proxy_variables("http://localhost:11434/v1"),
            "HTTP_PROXY (or ALL_PROXY)"
        );
    }
}
