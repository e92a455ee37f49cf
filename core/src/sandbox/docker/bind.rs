//! Bind-mounted inputs in the engine's terms: the mount a planned [`Bound`] asks for,
//! and the check that the engine made exactly those (see `sandbox::bind` for which
//! inputs are mounted and why).

use bollard::models::{
    Mount, MountBindOptions, MountBindOptionsPropagationEnum, MountPoint, MountType,
};

use crate::sandbox::bind::Bound;

/// The read-only bind mount of `b` at its target.
pub(super) fn mount(b: &Bound) -> Mount {
    Mount {
        target: Some(b.target.clone()),
        source: Some(b.source.display().to_string()),
        typ: Some(MountType::BIND),
        read_only: Some(true),
        // Private: nothing mounted later on the host (or in the container) shows
        // through on the other side.
        bind_options: Some(MountBindOptions {
            propagation: Some(MountBindOptionsPropagationEnum::RPRIVATE),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The bind mounts an engine made, checked against the plan: each one read-only,
/// private and at its place, and (when any was asked) no other bind mount.
pub(super) fn check_mounts(binds: &[Bound], made: Option<&Vec<MountPoint>>) -> Result<(), String> {
    let made: Vec<&MountPoint> = made
        .into_iter()
        .flatten()
        .filter(|m| m.typ.as_deref() == Some("bind"))
        .collect();
    let mut wrong = Vec::new();
    for b in binds {
        match made
            .iter()
            .find(|m| m.destination.as_deref() == Some(b.target.as_str()))
        {
            None => wrong.push(format!("bind mount {}: asked, not made", b.target)),
            Some(m) if m.rw != Some(false) => wrong.push(format!(
                "bind mount {}: asked read-only, got writable",
                b.target
            )),
            Some(m) if !matches!(m.propagation.as_deref(), None | Some("") | Some("rprivate")) => {
                wrong.push(format!(
                    "bind mount {}: asked rprivate propagation, got {}",
                    b.target,
                    m.propagation.as_deref().unwrap_or("")
                ))
            }
            Some(_) => {}
        }
    }
    // Checked where binds were asked (Docker Engine only): other engines were never
    // held to it, and what they list among their mounts is not known here.
    for m in made.iter().filter(|_| !binds.is_empty()) {
        let dest = m.destination.as_deref().unwrap_or("");
        if !binds.iter().any(|b| b.target == dest) {
            wrong.push(format!("bind mount {dest}: not asked"));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::bind::{FileId, BOUND_DIR};

    #[test]
    fn made_mounts_must_be_read_only_private_and_only_those_asked() {
        let b = Bound {
            dest: "x.csv".into(),
            source: "/data/x.csv".into(),
            target: format!("{BOUND_DIR}/0/x.csv"),
            id: FileId {
                size: 5,
                mtime_ns: 1_500_000_000_123,
                ino: 42,
            },
            live: true,
        };
        let point = |dest: &str, rw: bool, prop: &str| MountPoint {
            typ: Some("bind".into()),
            destination: Some(dest.into()),
            rw: Some(rw),
            propagation: Some(prop.into()),
            ..Default::default()
        };
        let ok = vec![point(&b.target, false, "rprivate")];
        check_mounts(std::slice::from_ref(&b), Some(&ok)).unwrap();
        let e = check_mounts(
            std::slice::from_ref(&b),
            Some(&vec![point(&b.target, true, "rshared")]),
        )
        .unwrap_err();
        assert!(e.contains("asked read-only, got writable"), "{e}");
        let e = check_mounts(
            std::slice::from_ref(&b),
            Some(&vec![
                point(&b.target, false, "rshared"),
                point("/etc", false, ""),
            ]),
        )
        .unwrap_err();
        assert!(
            e.contains("rshared") && e.contains("/etc: not asked"),
            "{e}"
        );
        assert!(check_mounts(std::slice::from_ref(&b), None).is_err());
        assert!(check_mounts(&[], None).is_ok());
        assert!(check_mounts(&[], Some(&vec![point("/etc", false, "")])).is_ok());
    }
}
