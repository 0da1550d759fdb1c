import t from 'tap';
import { MAX_DEPENDENCY_IDS, dependencyError, dependencyIds, parseDependency } from '../../../packages/protocol/src/dependency';

t.test("Slurm's forms, joined by commas", async (t) => {
  t.same(parseDependency('afterok:7'), { terms: [{ type: 'afterok', ids: [7] }], singleton: false });
  t.same(parseDependency('afterok:7:8,afternotok:9,afterany:10,after:11,singleton'), {
    terms: [{ type: 'afterok', ids: [7, 8] }, { type: 'afternotok', ids: [9] }, { type: 'afterany', ids: [10] }, { type: 'after', ids: [11] }],
    singleton: true,
  });
  t.same(parseDependency('singleton'), { terms: [], singleton: true });
  const d = parseDependency('afterok:3:4,afterany:4:5');
  t.same('error' in d ? null : dependencyIds(d), [3, 4, 5], 'each id once');
});

t.test('anything else is refused with one message', async (t) => {
  for (const bad of ['', 'afterok', 'afterok:', 'afterok:0', 'afterok:x', 'afterok:7?afterok:8', 'afterok:7+30', 'aftercorr:7',
    'afterok:7,', ',afterok:7', 'AFTEROK:7', 'afterok:07', 'afterok:-1', 'afterok:99999999999999999', 'expand:7', 'singleton:7']) {
    t.same(parseDependency(bad), { error: dependencyError(bad) }, JSON.stringify(bad));
  }
  t.equal(dependencyError('x'), "invalid dependency 'x': use afterok, afterany, afternotok or after with :ID[:ID...], or singleton, joined by ','");
  const many = `afterok:${Array.from({ length: MAX_DEPENDENCY_IDS + 1 }, (_, i) => i + 1).join(':')}`;
  t.same(parseDependency(many), { error: `a dependency may name at most ${MAX_DEPENDENCY_IDS} jobs` });
});
