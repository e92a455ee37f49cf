//! A remote engine behind TLS with client certificates, as `DOCKER_HOST=tcp://...`,
//! `DOCKER_TLS_VERIFY=1` and `DOCKER_CERT_PATH` describe it. The "remote" engine is
//! the local one behind a TLS front of ours on 127.0.0.1 that demands a client
//! certificate from our own test CA. In a process of its own: it sets DOCKER_* for the
//! process.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use sandalyst::sandbox::docker::{self, DockerSandbox};
use sandalyst::sandbox::{ExecStatus, Sandbox};
use sandalyst::workspace::{CopyReason, Manifest, StagingMethod};
use tokio::net::{TcpListener, UnixStream};
use tokio_util::sync::CancellationToken;

pub(crate) struct Pki {
    pub(crate) ca_pem: String,
    pub(crate) server: (String, String),
    pub(crate) client: (String, String),
}

pub(crate) fn pki() -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf = |names: Vec<String>, usage| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(names).unwrap();
        p.extended_key_usages = vec![usage];
        let cert = p.signed_by(&key, &ca_cert, &ca_key).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    Pki {
        ca_pem: ca_cert.pem(),
        server: leaf(
            vec!["127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        ),
        client: leaf(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth),
    }
}

/// The TLS front: requires a client certificate signed by `ca`, then relays bytes
/// to the local engine socket.
pub(crate) async fn tls_front(pki: &Pki) -> u16 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![CertificateDer::from_pem_slice(pki.server.0.as_bytes()).unwrap()],
            PrivateKeyDer::from_pem_slice(pki.server.1.as_bytes()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut unix) = UnixStream::connect("/var/run/docker.sock").await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut unix).await;
            });
        }
    });
    port
}

pub(crate) fn write_certs(dir: &Path, ca: &str, client: &(String, String)) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("ca.pem"), ca).unwrap();
    std::fs::write(dir.join("cert.pem"), &client.0).unwrap();
    std::fs::write(dir.join("key.pem"), &client.1).unwrap();
}

#[tokio::test]
async fn a_tls_engine_with_client_certificates_runs_the_sandbox() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    if !common::in_own_process(&[]) {
        return;
    }
    let image = common::image_tag(&docker).await;
    let pki = pki();
    let port = tls_front(&pki).await;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    write_certs(&good, &pki.ca_pem, &pki.client);
    // A client certificate from another CA must be refused by the engine's front.
    let other = self::pki();
    let bad = dir.path().join("bad");
    write_certs(&bad, &pki.ca_pem, &other.client);

    std::env::set_var("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"));
    std::env::set_var("DOCKER_TLS_VERIFY", "1");
    std::env::set_var("DOCKER_CERT_PATH", &bad);
    let err = docker::connect().await.unwrap_err();
    assert!(
        format!("{err:#}").contains(&format!("DOCKER_HOST=tcp://127.0.0.1:{port}")),
        "{err:#}"
    );

    std::env::set_var("DOCKER_CERT_PATH", &good);
    let engine = docker::connect().await.unwrap();
    let config = sandalyst::sandbox::SandboxConfig {
        image,
        memory_bytes: 1 << 30,
        ..Default::default()
    };
    let id = common::run_id("tls");
    // A large world-readable input: bind-mounted on a local socket, copied to a
    // remote engine (this one is local behind TLS, so a mount would even work).
    let big = dir.path().join("big.csv");
    std::fs::write(&big, "a,b\n".repeat(1 << 20)).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let manifest = Manifest::from_paths(std::slice::from_ref(&big)).unwrap();
    let sb = DockerSandbox::start(&engine, &id, &config, &manifest)
        .await
        .unwrap();
    let staged = sb.staging();
    assert_eq!(
        (staged[0].method, staged[0].reason),
        (StagingMethod::Copy, Some(CopyReason::RemoteEngine))
    );
    let c = CancellationToken::new();
    let r = sb
        .python(
            "x = 6 * 7\nprint(x)",
            Duration::from_secs(60),
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!((r.status, r.stdout.as_str()), (ExecStatus::Ok, "42\n"));
    let r = sb
        .shell("echo over tls", Duration::from_secs(60), &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.stdout, "over tls\n");
    let r = sb
        .shell(
            "test -L input/big.csv || stat -c %s input/big.csv",
            Duration::from_secs(60),
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.stdout.trim(), (4u64 << 20).to_string());
    sb.close().await.unwrap();
    assert_eq!(common::containers_labelled(&engine, &id).await, 0);
}
