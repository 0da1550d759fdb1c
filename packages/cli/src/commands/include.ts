import { exclusionCommand } from './exclude';

export default exclusionCommand('include', 'Make excluded device IDs available again (administrator)');
