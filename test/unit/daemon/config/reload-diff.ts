import t from 'tap';
import { changedSharingKeys } from '../../../../packages/daemon/src/config/reload-diff';
import { sharingSettings } from '../../../../packages/daemon/src/sharing/settings';

t.test('the [sharing] keys a reload changed', async (t) => {
  const asc = (extra: Record<string, string> = {}) => sharingSettings({ enabled: true, ascend: { library: '/l/libvnpu.so', ...extra } });
  t.same(changedSharingKeys(undefined, undefined), []);
  t.same(changedSharingKeys(asc(), asc()), []);
  t.same(changedSharingKeys(undefined, sharingSettings({ enabled: false })), [], 'an empty table is the default');
  t.same(changedSharingKeys(asc(), asc({ policy: 'fixed' })), ['sharing.ascend.policy']);
  t.same(changedSharingKeys(asc(), asc({ shared_region_dir: '/r', library: '/m/libvnpu.so' })), ['sharing.ascend.library', 'sharing.ascend.shared_region_dir']);
  t.same(changedSharingKeys(asc(), undefined), ['sharing.enabled', 'sharing.ascend']);
});
