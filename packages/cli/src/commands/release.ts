import { holdCommand } from './hold';

export default holdCommand('release', 'Release held jobs: they may start again (owner or root)', 'released');
