import { test } from 'node:test';
import assert from 'node:assert/strict';

// settings.js reaches Tauri through api.js, which reads window at import.
globalThis.window = { __TAURI__: {} };
const { readForm } = await import('../js/settings.js');

test('the settings form carries the pip and apt package lists as typed', () => {
  const names = ['provider', 'model', 'base_url', 'instructions', 'image_tag', 'pip_packages', 'apt_packages', 'approval',
    'python', 'shell', 'network_mode', 'network_hosts', 'isolation', 'show_charts', 'follow_outside_links',
    'max_turns', 'wall_time_secs', 'call_timeout_secs', 'memory_mb', 'cpus', 'max_cost_usd'];
  const elements = Object.fromEntries(names.map((n) => [n, { value: '1', checked: false }]));
  elements.pip_packages.value = '  tabulate pyjanitor==0.27 ';
  elements.apt_packages.value = 'fonts-noto-cjk';
  elements.approval.value = 'shell';
  const s = readForm({ elements }, { provider: 'offline' });
  assert.equal(s.approval, 'shell', 'the default approval mode of new sessions');
  // Trimmed here; each name is checked by the core when the settings are saved.
  assert.equal(s.pip_packages, 'tabulate pyjanitor==0.27');
  assert.equal(s.apt_packages, 'fonts-noto-cjk');
});

const { splitNetwork, joinNetwork, addHost, describeNetwork } = await import('../js/network.js');

test('the network setting round-trips between the core text and the form', () => {
  assert.deepEqual(splitNetwork('off'), { mode: 'off', hosts: '' });
  assert.deepEqual(splitNetwork(false), { mode: 'off', hosts: '' }, 'older settings wrote a bool');
  assert.deepEqual(splitNetwork(true), { mode: 'full', hosts: '' });
  assert.deepEqual(splitNetwork('allow:pypi.org,@python-packages'), { mode: 'allow', hosts: 'pypi.org, @python-packages' });
  assert.equal(joinNetwork('allow', ' pypi.org  files.pythonhosted.org,pypi.org '), 'allow:pypi.org,files.pythonhosted.org');
  assert.equal(joinNetwork('full', 'pypi.org'), 'full', 'hosts do not matter outside allow');
  assert.equal(joinNetwork('off', ''), 'off');
  assert.equal(joinNetwork('allow', ''), 'allow:', 'an empty list reaches the core, which refuses it with a reason');
  assert.equal(addHost('pypi.org', '@python-packages'), 'pypi.org, @python-packages');
  assert.equal(addHost('pypi.org, @python-packages', '@python-packages'), 'pypi.org, @python-packages');
  assert.equal(describeNetwork('allow:a.test,b.test'), 'allowlist: a.test, b.test');
  assert.equal(describeNetwork('full'), 'full (unchecked)');
});

test('the settings form writes the network mode with its hosts and the isolation', () => {
  const names = ['provider', 'model', 'base_url', 'instructions', 'image_tag', 'pip_packages', 'apt_packages', 'approval',
    'python', 'shell', 'network_mode', 'network_hosts', 'isolation', 'show_charts', 'follow_outside_links',
    'max_turns', 'wall_time_secs', 'call_timeout_secs', 'memory_mb', 'cpus', 'max_cost_usd'];
  const elements = Object.fromEntries(names.map((n) => [n, { value: '1', checked: false }]));
  elements.network_mode.value = 'allow';
  elements.network_hosts.value = '@python-packages, example.com:8443';
  elements.isolation.value = 'gvisor';
  elements.follow_outside_links.checked = true;
  const s = readForm({ elements }, {});
  assert.equal(s.network, 'allow:@python-packages,example.com:8443');
  assert.equal(s.isolation, 'gvisor');
  assert.equal(s.follow_outside_links, true, 'links that leave a dropped folder, as the core names it');
});

const { modelChoices } = await import('../js/settings.js');

test('listed models become the model field\'s choices, without the provider', () => {
  const listed = [
    { spec: 'offline', id: 'offline', detail: 'the built-in analyst (rule-based, not an LLM)' },
    { spec: 'ollama:qwen2.5-coder:7b', id: 'qwen2.5-coder:7b', detail: '7.6B, 4.7 GB' },
    { spec: 'ollama:llama3.2:1b', id: 'llama3.2:1b', detail: null },
  ];
  assert.deepEqual(modelChoices(listed, 'ollama'), [
    { value: 'qwen2.5-coder:7b', label: 'qwen2.5-coder:7b (7.6B, 4.7 GB)' },
    { value: 'llama3.2:1b', label: 'llama3.2:1b' },
  ]);
});
