//! Where a host name leads: the [`Resolver`] turns an allowed host into the addresses
//! the proxy may connect to, and refuses the ones the sandbox must never reach.
//!
//! Names are looked up on the host (the container has no DNS of its own), unless the
//! user or a test pinned them ([`Resolver::pin`], like an `/etc/hosts` line of their
//! choosing). Every address that is not plainly public ([`refused_range`]: loopback,
//! the LAN, link-local with the cloud metadata address, CGNAT, multicast, ...) is
//! dropped, whether it came from DNS or was written as an IP literal; only a pinned
//! address is taken as it is, because the user chose it. The proxy then connects to
//! exactly the addresses returned here, so a name cannot be re-resolved to something
//! else in between.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::event::Refusal;
use super::policy::{Host, PolicyError};

/// The kinds of address the sandbox may not reach (in every mode but `full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressRange {
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), unique-local `fc00::/7`,
    /// site-local `fec0::/10`.
    Private,
    /// `169.254/16` (with the cloud metadata address 169.254.169.254), `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10`.
    SharedCgnat,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`.
    Documentation,
    /// The rest that is not public: `192.0.0/24`, benchmarking `198.18/15`, `240/4`,
    /// IPv4-compatible `::/96`, discard `100::/64`, Teredo `2001::/32`, local NAT64
    /// `64:ff9b:1::/48`.
    Reserved,
}

impl fmt::Display for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressRange::Unspecified => "unspecified",
            AddressRange::Loopback => "loopback (this machine)",
            AddressRange::Private => "private (LAN)",
            AddressRange::LinkLocal => "link-local (includes cloud metadata)",
            AddressRange::SharedCgnat => "shared (carrier-grade NAT)",
            AddressRange::Multicast => "multicast",
            AddressRange::Broadcast => "broadcast",
            AddressRange::Documentation => "documentation",
            AddressRange::Reserved => "reserved",
        })
    }
}

/// The range that makes `ip` unreachable for the sandbox, or `None` for a public
/// address. IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`,
/// translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`)
/// are judged by the IPv4 address inside.
pub fn refused_range(ip: IpAddr) -> Option<AddressRange> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4),
        IpAddr::V6(v6) => v6_range(v6),
    }
}

fn v4_range(ip: Ipv4Addr) -> Option<AddressRange> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => AddressRange::Unspecified,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => AddressRange::Private,
        (100, 64..=127, _) => AddressRange::SharedCgnat,
        (127, _, _) => AddressRange::Loopback,
        (169, 254, _) => AddressRange::LinkLocal,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressRange::Documentation,
        (192, 0, 0) | (198, 18..=19, _) => AddressRange::Reserved,
        (224..=239, _, _) => AddressRange::Multicast,
        _ if ip == Ipv4Addr::BROADCAST => AddressRange::Broadcast,
        (240..=255, _, _) => AddressRange::Reserved,
        _ => return None,
    })
}

fn v6_range(ip: Ipv6Addr) -> Option<AddressRange> {
    let s = ip.segments();
    let embedded =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if ip.is_unspecified() {
        return Some(AddressRange::Unspecified);
    }
    if ip.is_loopback() {
        return Some(AddressRange::Loopback);
    }
    match s {
        // IPv4-mapped and IPv4-translated.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0xffff, 0, hi, lo] => {
            return v4_range(embedded(hi, lo))
        }
        // NAT64's well-known prefix.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return v4_range(embedded(hi, lo)),
        // 6to4.
        [0x2002, hi, lo, ..] => return v4_range(embedded(hi, lo)),
        _ => {}
    }
    Some(match s {
        [0, 0, 0, 0, 0, 0, _, _] => AddressRange::Reserved, // IPv4-compatible, deprecated
        [0x64, 0xff9b, 1, ..] => AddressRange::Reserved,
        [0x100, 0, 0, 0, ..] => AddressRange::Reserved,
        [0x2001, 0, ..] => AddressRange::Reserved, // Teredo: hides the IPv4 it reaches
        [0x2001, 0xdb8, ..] => AddressRange::Documentation,
        [x, ..] if x & 0xfe00 == 0xfc00 => AddressRange::Private,
        [x, ..] if x & 0xffc0 == 0xfec0 => AddressRange::Private,
        [x, ..] if x & 0xffc0 == 0xfe80 => AddressRange::LinkLocal,
        [x, ..] if x & 0xff00 == 0xff00 => AddressRange::Multicast,
        _ => return None,
    })
}

/// How long a system lookup may take before the request is refused.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Host names to addresses: pinned entries first, then (unless
/// [`pinned_only`](Resolver::pinned_only)) the host's own DNS.
#[derive(Clone, Debug)]
pub struct Resolver {
    pinned: BTreeMap<String, Vec<SocketAddr>>,
    system: bool,
    timeout: Duration,
}

impl Resolver {
    /// The host's DNS (`getaddrinfo`, through [`tokio::net::lookup_host`]), plus the
    /// names pinned later.
    pub fn system() -> Resolver {
        Resolver {
            pinned: BTreeMap::new(),
            system: true,
            timeout: LOOKUP_TIMEOUT,
        }
    }

    /// Pinned names only: a name not pinned does not resolve, and nothing is ever
    /// asked of DNS (tests, and set-ups that list every address).
    pub fn pinned_only() -> Resolver {
        Resolver {
            system: false,
            ..Resolver::system()
        }
    }

    /// Sends `host` to `addrs`, whatever DNS says, private addresses included: the
    /// user (or a test) chose them. An address with port 0 keeps the port the request
    /// asked for; any other port replaces it (a local mirror standing in for
    /// `pypi.org:443`, say). The name is matched case-insensitively; an IP literal
    /// cannot be pinned.
    pub fn pin(
        mut self,
        host: &str,
        addrs: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Resolver, PolicyError> {
        match Host::parse(host)? {
            Host::Name(name) => {
                self.pinned.entry(name).or_default().extend(addrs);
                Ok(self)
            }
            Host::Ip(_) => Err(PolicyError::BadName {
                entry: host.into(),
                problem: "an address cannot be pinned; pin a name to it".into(),
            }),
        }
    }

    /// Where `host:port` may be reached, in the order to try; never an address of a
    /// refused range unless pinned. An IP literal is judged as it is, with no lookup.
    pub async fn resolve(&self, host: &Host, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        let name = match host {
            Host::Ip(ip) => {
                return match refused_range(*ip) {
                    Some(range) => Err(Refusal::PrivateAddress { addr: *ip, range }),
                    None => Ok(vec![SocketAddr::new(*ip, port)]),
                }
            }
            Host::Name(name) => name,
        };
        if let Some(addrs) = self.pinned.get(name) {
            return Ok(addrs
                .iter()
                .map(|a| match a.port() {
                    0 => SocketAddr::new(a.ip(), port),
                    _ => *a,
                })
                .collect());
        }
        if !self.system {
            return Err(Refusal::ResolveFailed {
                message: format!("{name} is not pinned, and this proxy asks no DNS"),
            });
        }
        let found: Vec<SocketAddr> = match tokio::time::timeout(
            self.timeout,
            tokio::net::lookup_host((name.as_str(), port)),
        )
        .await
        {
            Ok(Ok(addrs)) => addrs.collect(),
            Ok(Err(e)) => {
                return Err(Refusal::ResolveFailed {
                    message: e.to_string(),
                })
            }
            Err(_) => {
                return Err(Refusal::ResolveFailed {
                    message: format!("no answer in {} s", self.timeout.as_secs()),
                })
            }
        };
        let Some(first) = found.first() else {
            return Err(Refusal::ResolveFailed {
                message: "no address".into(),
            });
        };
        let public: Vec<SocketAddr> = found
            .iter()
            .copied()
            .filter(|a| refused_range(a.ip()).is_none())
            .collect();
        if public.is_empty() {
            let range = refused_range(first.ip()).expect("not public");
            return Err(Refusal::PrivateAddress {
                addr: first.ip(),
                range,
            });
        }
        Ok(public)
    }
}

/// One name the user sends to an address of their choosing (`--resolve NAME=ADDR`,
/// `egress_resolve` in the config): a package mirror on the LAN, or a test's own
/// listener. Text form `NAME=IP`, `NAME=IP:PORT` or `NAME=[IPv6]:PORT`; without a port
/// the request's port is kept. Checked where it enters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    pub host: String,
    /// Port 0: the port the request asked for.
    pub addr: SocketAddr,
}

impl std::str::FromStr for Pin {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Pin, PolicyError> {
        let bad = |problem: &str| PolicyError::BadName {
            entry: s.into(),
            problem: problem.into(),
        };
        let (name, addr) = s.trim().split_once('=').ok_or_else(|| {
            bad("write NAME=ADDRESS, e.g. pypi.internal=10.0.0.5 or pypi.internal=10.0.0.5:8080")
        })?;
        let host = match Host::parse(name.trim())? {
            Host::Name(n) => n,
            Host::Ip(_) => return Err(bad("an address cannot be pinned; pin a name to it")),
        };
        let addr = addr.trim();
        let addr = match (addr.parse::<SocketAddr>(), addr.parse::<IpAddr>()) {
            (Ok(a), _) => a,
            (_, Ok(ip)) => SocketAddr::new(ip, 0),
            _ => {
                return Err(bad(
                    "the address is not an IP address (with an optional :PORT)",
                ))
            }
        };
        Ok(Pin { host, addr })
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.addr.port(), self.addr.ip()) {
            (0, ip) => write!(f, "{}={ip}", self.host),
            _ => write!(f, "{}={}", self.host, self.addr),
        }
    }
}

impl Serialize for Pin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Pin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pin, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl Resolver {
    /// The user's pins on top of this resolver.
    pub fn with_pins(self, pins: &[Pin]) -> Resolver {
        pins.iter().fold(self, |r, p| {
            r.pin(&p.host, [p.addr]).expect("a Pin holds a name")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(s: &str) -> Option<AddressRange> {
        refused_range(s.parse().unwrap())
    }

    #[test]
    fn every_non_public_range_is_named() {
        use AddressRange::*;
        let cases = [
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.254.0.1", Some(LinkLocal)),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.127.255.254", Some(SharedCgnat)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("240.0.0.1", Some(Reserved)),
            ("192.0.0.8", Some(Reserved)),
            ("198.18.0.1", Some(Reserved)),
            ("192.0.2.1", Some(Documentation)),
            ("198.51.100.1", Some(Documentation)),
            ("203.0.113.1", Some(Documentation)),
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fc00::1", Some(Private)),
            ("fd12:3456::1", Some(Private)),
            ("fec0::1", Some(Private)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Documentation)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.1", Some(Private)),
            ("::ffff:0:10.0.0.1", Some(Private)),
            ("64:ff9b::10.0.0.1", Some(Private)),
            ("2002:a9fe:a9fe::1", Some(LinkLocal)),
            ("::10.0.0.1", Some(Reserved)),
            ("2001::1", Some(Reserved)),
            ("100::1", Some(Reserved)),
            ("64:ff9b:1::1", Some(Reserved)),
            // Public.
            ("8.8.8.8", None),
            ("151.101.0.223", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("169.253.1.1", None),
            ("2606:4700::1111", None),
            ("2a04:4e42::223", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2002:0808:0808::1", None),
        ];
        for (addr, want) in cases {
            assert_eq!(range(addr), want, "{addr}");
        }
    }

    #[tokio::test]
    async fn literals_are_judged_without_a_lookup_and_pins_are_trusted() {
        let r = Resolver::pinned_only()
            .pin("Mirror.Test.", ["127.0.0.1:0".parse().unwrap()])
            .unwrap()
            .pin("pypi.test", ["127.0.0.1:8443".parse().unwrap()])
            .unwrap();
        let host = |s: &str| Host::parse(s).unwrap();
        assert_eq!(
            r.resolve(&host("mirror.test"), 80).await.unwrap(),
            vec!["127.0.0.1:80".parse().unwrap()]
        );
        assert_eq!(
            r.resolve(&host("pypi.test"), 443).await.unwrap(),
            vec!["127.0.0.1:8443".parse().unwrap()]
        );
        assert_eq!(
            r.resolve(&host("169.254.169.254"), 80).await.unwrap_err(),
            Refusal::PrivateAddress {
                addr: "169.254.169.254".parse().unwrap(),
                range: AddressRange::LinkLocal
            }
        );
        assert_eq!(
            r.resolve(&host("8.8.8.8"), 53).await.unwrap(),
            vec!["8.8.8.8:53".parse().unwrap()],
            "a public literal resolves to itself (nothing is sent)"
        );
        assert!(matches!(
            r.resolve(&host("other.test"), 80).await.unwrap_err(),
            Refusal::ResolveFailed { .. }
        ));
        assert!(Resolver::pinned_only().pin("10.0.0.1", []).is_err());
    }

    #[test]
    fn pins_parse_with_and_without_a_port_and_refuse_what_is_not_a_name_and_address() {
        let p: Pin = "PyPI.Internal.=10.0.0.5".parse().unwrap();
        assert_eq!(
            (p.host.as_str(), p.addr),
            ("pypi.internal", "10.0.0.5:0".parse().unwrap())
        );
        assert_eq!(p.to_string(), "pypi.internal=10.0.0.5");
        let p: Pin = "mirror.test=[::1]:8080".parse().unwrap();
        assert_eq!(p.addr, "[::1]:8080".parse().unwrap());
        assert_eq!(p.to_string(), "mirror.test=[::1]:8080");
        for bad in [
            "pypi.org",
            "10.0.0.1=10.0.0.2",
            "pypi.org=example.com",
            "=1.2.3.4",
            "a b=1.2.3.4",
        ] {
            assert!(bad.parse::<Pin>().is_err(), "{bad} was taken");
        }
        let json =
            serde_json::to_string(&vec!["a.test=127.0.0.1:9".parse::<Pin>().unwrap()]).unwrap();
        assert_eq!(json, r#"["a.test=127.0.0.1:9"]"#);
        assert!(serde_json::from_str::<Pin>(r#""nope""#).is_err());
    }
}
