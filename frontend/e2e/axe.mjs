// Accessibility check with axe-core in the page: the serious and critical violations of WCAG 2
// A/AA rules, as one line each ("rule: help (n nodes: selector, …)").
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The server's Content-Security-Policy (script-src 'self') refuses an injected <script> tag, so
// axe's source is evaluated through the DevTools protocol, which the policy does not govern.
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe on page and returns its serious and critical violations as text lines. */
export async function seriousViolations(page) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')), n: v.nodes.length }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} (${v.n} nodes: ${v.targets.join(', ')})`);
}
