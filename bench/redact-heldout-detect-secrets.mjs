/**
 * The test cases of Yelp's detect-secrets plugins (tests/plugins/*_test.py), read from a checkout
 * of detect-secrets: for bench/redact-heldout.mjs `--extract`. Needs python3 with PyYAML and
 * requests (detect-secrets' own dependencies); detect-secrets itself is imported from the
 * checkout, not installed.
 *
 * Each plugin's test lists lines with whether the plugin must flag them (`@pytest.mark.parametrize`
 * over `payload, should_flag` or `line, should_flag`, or lines that must all be flagged), and the
 * keyword plugin's test lists lines with the secret it must report (`CONFIG_TEST_CASES`, ...: a
 * `None` secret is a line it must not flag). The lists are read with Python's `ast`, evaluated
 * only where they are literals, string concatenation, `.format` or slices of the module's own
 * constants. For a line the plugin must flag, the secret is what the plugin itself reports
 * (`analyze_line`), so where a secret starts and ends is detect-secrets' answer, not a guess.
 * Not read: the high-entropy and public-IP plugins (their cases are formats and addresses, not
 * credentials) and the private-key test (whole files).
 */
import { spawnSync } from "node:child_process";

const PYTHON = `
import ast, json, os, sys, importlib
root = sys.argv[1]
sys.path.insert(0, root)
from detect_secrets.settings import default_settings

SKIP = {'base_test.py', 'high_entropy_strings_test.py', 'ip_public_test.py', 'private_key_test.py'}

class Unknown(Exception):
    pass

def evaluate(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return [evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unknown(node.id)
    if isinstance(node, ast.BinOp):
        a, b = evaluate(node.left, env), evaluate(node.right, env)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Mod):
            return a % b
        raise Unknown('op')
    if isinstance(node, ast.Subscript):
        v = evaluate(node.value, env)
        s = node.slice
        if isinstance(s, ast.Slice):
            lo = evaluate(s.lower, env) if s.lower else None
            hi = evaluate(s.upper, env) if s.upper else None
            return v[lo:hi]
        return v[evaluate(s, env)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'format':
        base = evaluate(node.func.value, env)
        args = [evaluate(a, env) for a in node.args]
        kwargs = {k.arg: evaluate(k.value, env) for k in node.keywords}
        return base.format(*args, **kwargs)
    if isinstance(node, ast.JoinedStr):
        out = ''
        for part in node.values:
            out += part.value if isinstance(part, ast.Constant) else str(evaluate(part.value, env))
        return out
    raise Unknown(type(node).__name__)

def module_env(tree):
    env = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                env[stmt.targets[0].id] = evaluate(stmt.value, env)
            except Exception:
                pass
    return env

def imports(tree):
    out = {}
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.module.startswith('detect_secrets.plugins'):
            for a in stmt.names:
                out[a.asname or a.name] = stmt.module
    return out

def detector_in(fn, imported):
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported and node.func.id.endswith('Detector'):
            return node.func.id
    return None

def secrets_of(plugin, line):
    try:
        return sorted({s.secret_value for s in plugin.analyze_line(filename='mock_filename', line=line) if s.secret_value})
    except Exception:
        return []

cases = []
skipped = []
with default_settings():
    plugdir = os.path.join(root, 'tests', 'plugins')
    for name in sorted(os.listdir(plugdir)):
        if not name.endswith('_test.py') or name in SKIP:
            continue
        tree = ast.parse(open(os.path.join(plugdir, name)).read())
        env = module_env(tree)
        imported = imports(tree)
        def plugin_named(cls):
            return getattr(importlib.import_module(imported[cls]), cls)()
        if name == 'keyword_test.py':
            plugin = plugin_named('KeywordDetector')
            seen = set()
            for var, value in env.items():
                if not var.endswith('_TEST_CASES'):
                    continue
                for line, secret in value:
                    if line in seen or len(line) > 2000:
                        continue
                    seen.add(line)
                    if secret:
                        cases.append({'plugin': 'KeywordDetector', 'file': name, 'text': line, 'flag': True, 'secrets': [secret]})
                    else:
                        cases.append({'plugin': 'KeywordDetector', 'file': name, 'text': line, 'flag': False})
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            cls = detector_in(fn, imported)
            for dec in fn.decorator_list:
                if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == 'parametrize'):
                    continue
                try:
                    argnames = evaluate(dec.args[0], env)
                    values = evaluate(dec.args[1], env)
                except Unknown as e:
                    skipped.append(f'{name}: {fn.name}: {e}')
                    continue
                names = [n.strip() for n in argnames.split(',')] if isinstance(argnames, str) else list(argnames)
                text_at = next((i for i, n in enumerate(names) if n in ('payload', 'line', 'token')), None)
                flag_at = next((i for i, n in enumerate(names) if n in ('should_flag', 'expected')), None)
                if text_at is None or cls is None:
                    skipped.append(f'{name}: {fn.name}: parameters {names}')
                    continue
                plugin = plugin_named(cls)
                for v in values:
                    row = v if len(names) > 1 else [v]
                    text = row[text_at]
                    flag = bool(row[flag_at]) if flag_at is not None else True
                    if not isinstance(text, str):
                        continue
                    case = {'plugin': cls, 'file': name, 'text': text, 'flag': flag}
                    if flag:
                        case['secrets'] = secrets_of(plugin, text)
                        case['alone'] = {s: bool(secrets_of(plugin, s)) for s in case['secrets']}
                    cases.append(case)
print(json.dumps({'cases': cases, 'skipped': skipped}))
`;

/**
 * Every case of detect-secrets' plugin tests in the checkout at `root`: `{ plugin, file, text,
 * flag, secrets? }` (secrets: what the plugin reports in a line it must flag), and what was not read.
 */
export function extractDetectSecrets(root) {
  const r = spawnSync("python3", ["-c", PYTHON, root], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`detect-secrets extraction failed (python3 with PyYAML and requests needed):\n${r.stderr}`);
  return JSON.parse(r.stdout);
}
