// The settings dialog: model, agent, sandbox and limits, image. The API key field is
// write-only: a saved key comes back only in masked form.

import { $ } from './dom.js';
import { invoke, channel } from './api.js';
import { bytes } from './format.js';
import { MODES } from './approval.js';
import { splitNetwork, joinNetwork, addHost } from './network.js';

const NUMBERS = ['max_turns', 'wall_time_secs', 'call_timeout_secs', 'memory_mb', 'cpus', 'max_cost_usd'];
const CHECKS = ['python', 'shell', 'show_charts', 'follow_outside_links'];
const TEXTS = ['provider', 'model', 'base_url', 'instructions', 'image_tag', 'pip_packages', 'apt_packages', 'approval', 'isolation'];

/// Form values -> settings object (pure given the form's fields).
export function readForm(form, base) {
  const s = { ...base };
  for (const k of TEXTS) s[k] = form.elements[k].value.trim();
  for (const k of CHECKS) s[k] = form.elements[k].checked;
  s.network = joinNetwork(form.elements.network_mode.value, form.elements.network_hosts.value);
  for (const k of NUMBERS) {
    const v = Number(form.elements[k].value);
    if (Number.isFinite(v) && v >= 0) s[k] = k === 'cpus' || k === 'max_cost_usd' ? v : Math.round(v);
  }
  return s;
}

function fill(form, s) {
  for (const k of TEXTS) form.elements[k].value = s[k] ?? '';
  if (!form.elements.approval.value) form.elements.approval.value = 'auto';
  if (!form.elements.isolation.value) form.elements.isolation.value = 'auto';
  const net = splitNetwork(s.network);
  form.elements.network_mode.value = net.mode;
  form.elements.network_hosts.value = net.hosts;
  for (const k of CHECKS) form.elements[k].checked = !!s[k];
  for (const k of NUMBERS) form.elements[k].value = s[k];
}

/// The provider list comes from the core's providers' table, once.
let choices = null;
async function fillProviders(select) {
  choices ??= await invoke('providers');
  if (select.options.length) return;
  for (const c of choices) {
    const o = document.createElement('option');
    o.value = c.name;
    o.textContent = c.label;
    o.title = c.base_url ? `default: ${c.base_url}` : '';
    select.append(o);
  }
}

/// The approval modes, from the one list the composer uses too.
function fillModes(select) {
  if (select.options.length) return;
  for (const m of MODES) {
    const o = document.createElement('option');
    o.value = m.value;
    o.textContent = m.long;
    select.append(o);
  }
}

/// The network mode's hosts field, preset buttons and what the mode exposes (the
/// core's sentences).
let network = null;
async function wireNetwork(form) {
  network ??= await invoke('network_choices').catch(() => ({ presets: [] }));
  const presets = $('#network-presets');
  if (!presets.childElementCount) {
    for (const p of network.presets) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `+ ${p.label}`;
      b.title = `${p.about}: ${p.hosts.join(', ')}`;
      b.onclick = () => { form.elements.network_hosts.value = addHost(form.elements.network_hosts.value, p.entry); };
      presets.append(b);
    }
  }
  const show = () => {
    const mode = form.elements.network_mode.value;
    $('#network-allow').hidden = mode !== 'allow';
    $('#network-exposure').textContent = network[mode] ? `${network[mode][0].toUpperCase()}${network[mode].slice(1)}.` : '';
  };
  form.elements.network_mode.onchange = show;
  show();
}

/// "List models": what the provider's server offers, as choices for the model field
/// (its name without the provider, as the field takes it).
export function modelChoices(listed, provider) {
  return listed
    .filter((m) => m.spec.startsWith(`${provider}:`))
    .map((m) => ({ value: m.spec.slice(provider.length + 1), label: m.detail ? `${m.id} (${m.detail})` : m.id }));
}

async function listModels(form) {
  const provider = form.elements.provider.value;
  const status = $('#model-list-status');
  const list = $('#model-list');
  if (!provider || provider === 'offline') { status.textContent = 'The offline analyst is built in: no model to pick.'; return; }
  status.textContent = 'Asking the server…';
  try {
    const listed = await invoke('list_models', { provider, baseUrl: form.elements.base_url.value.trim() || null });
    const choices = modelChoices(listed, provider);
    list.replaceChildren(...choices.map((c) => Object.assign(document.createElement('option'), { value: c.value, label: c.label })));
    status.textContent = choices.length ? `${choices.length} model(s): pick one in the Model name field.` : 'The server lists no models.';
    if (choices.length && !form.elements.model.value) form.elements.model.value = choices[0].value;
  } catch (e) {
    status.textContent = String(e?.message ?? e);
  }
}

async function refreshKey(form) {
  const p = form.elements.provider.value;
  const out = $('#key-status');
  if (!choices?.find((c) => c.name === p)?.takes_key) { out.textContent = 'The offline analyst needs no key.'; return; }
  out.textContent = 'Looking in the keychain…';
  const masked = await invoke('api_key_status', { provider: p }).catch(() => null);
  out.textContent = masked ? `Key stored in the keychain: ${masked}` : 'No key stored for this provider (an environment variable works too).';
}

export async function refreshImage() {
  const st = await invoke('engine_status');
  const el = $('#image-status');
  if (!st.reachable) el.textContent = `No Docker engine answers, so the image cannot be checked. ${st.fix ?? ''}`;
  else if (st.image_present) el.textContent = `Image ${st.image_tag} is ready${st.image_bytes ? ` (${bytes(st.image_bytes)})` : ''}.`;
  else el.textContent = `Image ${st.image_tag} is missing: it is built before the first ask, or build it now.`;
  $('#engine-line').textContent = st.engine ? `Engine: ${st.engine}.${(st.missing || []).map((m) => ` ${m}`).join('')}` : '';
  $('#build-image').disabled = !st.reachable;
  return st;
}

export async function openSettings(onSaved) {
  const d = $('#settings');
  const form = $('#settings-form');
  const current = await invoke('get_settings');
  await fillProviders(form.elements.provider);
  fillModes(form.elements.approval);
  fill(form, current);
  await wireNetwork(form);
  form.elements.api_key.value = '';
  refreshKey(form);
  refreshImage().catch(() => {});
  form.elements.provider.onchange = () => refreshKey(form);
  $('#list-models').onclick = () => listModels(form);
  $('#save-key').onclick = async () => {
    const key = form.elements.api_key.value;
    if (!key.trim()) return;
    try {
      const masked = await invoke('save_api_key', { provider: form.elements.provider.value, key });
      form.elements.api_key.value = '';
      $('#key-status').textContent = `Key stored in the keychain: ${masked}`;
    } catch (e) { $('#key-status').textContent = String(e); }
  };
  $('#build-image').onclick = () => {
    const log = $('#build-log');
    const bar = $('#build-progress');
    log.hidden = false; bar.hidden = false; log.textContent = '';
    $('#build-image').disabled = true;
    invoke('build_image', {
      onEvent: channel((ev) => {
        if (ev.type === 'line') { log.textContent += `${ev.text}\n`; log.scrollTop = log.scrollHeight; }
        else {
          bar.hidden = true; $('#build-image').disabled = false;
          log.textContent += ev.type === 'done' ? `Built ${ev.tag}.\n` : `${ev.message}\n`;
          refreshImage().catch(() => {});
        }
      }),
    });
  };
  d.onclose = async () => {
    if (d.returnValue !== 'save') return;
    const s = readForm(form, current);
    try { await invoke('save_settings', { settings: s }); onSaved?.(s); } catch (e) { alert(String(e)); }
  };
  d.returnValue = '';
  d.showModal();
}
