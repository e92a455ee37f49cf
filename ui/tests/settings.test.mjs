import { test } from 'node:test';
import assert from 'node:assert/strict';

// settings.js reaches Tauri through api.js, which reads window at import.
globalThis.window = { __TAURI__: {} };
const { readForm } = await import('../js/settings.js');

test('the settings form carries the pip and apt package lists as typed', () => {
  const names = ['provider', 'model', 'base_url', 'instructions', 'image_tag', 'pip_packages', 'apt_packages', 'approval',
    'python', 'shell', 'network', 'show_charts',
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
