// The sandbox's network in the settings dialog: a mode (off, allowlist, full) and,
// for the allowlist, the hosts as typed. The core keeps it as one text
// (`off`, `full`, `allow:pypi.org,@python-packages`) and checks it when saved.

/// `{mode, hosts}` from the settings' text (unknown text: shown as an allowlist to fix).
export function splitNetwork(text) {
  const t = String(text ?? '').trim();
  const low = t.toLowerCase();
  if (low === '' || low === 'off' || low === 'false') return { mode: 'off', hosts: '' };
  if (low === 'full' || low === 'true') return { mode: 'full', hosts: '' };
  const hosts = low.startsWith('allow:') ? t.slice(6) : t;
  return { mode: 'allow', hosts: hosts.split(',').map((h) => h.trim()).filter(Boolean).join(', ') };
}

/// The settings' text from the form's mode and hosts (commas or spaces between hosts).
export function joinNetwork(mode, hosts) {
  if (mode !== 'allow') return mode === 'full' ? 'full' : 'off';
  const list = String(hosts ?? '').split(/[\s,]+/).map((h) => h.trim()).filter(Boolean);
  return `allow:${[...new Set(list)].join(',')}`;
}

/// The hosts with `entry` (a preset such as `@python-packages`) added once.
export function addHost(hosts, entry) {
  const list = String(hosts ?? '').split(/[\s,]+/).filter(Boolean);
  if (!list.includes(entry)) list.push(entry);
  return list.join(', ');
}

/// A one-line summary for a session's header: `network: allow pypi.org, files.pythonhosted.org`.
export function describeNetwork(text) {
  const { mode, hosts } = splitNetwork(text);
  if (mode === 'allow') return `allowlist: ${hosts}`;
  return mode === 'full' ? 'full (unchecked)' : 'off';
}
