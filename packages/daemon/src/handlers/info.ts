import type { Handler } from './types';

export const info: Handler<'info'> = ({ core }) => core.devices.views();
