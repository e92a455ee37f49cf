// A small Python (and shell) highlighter: splits code into [class, text] tokens that
// the view turns into text nodes. Pure.

const KEYWORDS = new Set(('False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case').split(' '));
const BUILTINS = new Set('print len range open str int float list dict set tuple sorted sum min max abs round enumerate zip isinstance type display'.split(' '));

const TOKEN = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|[rbfuRBFU]{0,2}"(?:[^"\\\n]|\\.)*"?|[rbfuRBFU]{0,2}'(?:[^'\\\n]|\\.)*'?)|(\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)|(\s+)|([^\sA-Za-z0-9_#"']+)/g;

export function tokenize(code) {
  const out = [];
  const push = (cls, text) => {
    const last = out[out.length - 1];
    if (last && last[0] === cls) last[1] += text; else out.push([cls, text]);
  };
  TOKEN.lastIndex = 0;
  let m;
  let pos = 0;
  while ((m = TOKEN.exec(code)) !== null) {
    if (m.index > pos) push('', code.slice(pos, m.index));
    if (m[1]) push('c', m[1]);
    else if (m[2]) push('s', m[2]);
    else if (m[3]) push('n', m[3]);
    else if (m[4]) push(KEYWORDS.has(m[4]) ? 'k' : BUILTINS.has(m[4]) ? 'b' : '', m[4]);
    else push('', m[0]);
    pos = TOKEN.lastIndex;
    if (m[0].length === 0) TOKEN.lastIndex++;
  }
  if (pos < code.length) push('', code.slice(pos));
  return out;
}
