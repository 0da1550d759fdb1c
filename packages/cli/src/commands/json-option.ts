export const JSON_OPTION = { json: { type: 'boolean', describe: 'Print JSON' } } as const;
