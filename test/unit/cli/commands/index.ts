import t from 'tap';
import { COMMANDS, allCommands, findCommand } from '../../../../packages/cli/src/commands';

t.test('the command table matches each module', async (t) => {
  for (const [names, load] of COMMANDS) {
    const cmd = load();
    t.same([cmd.command, ...(cmd.aliases ?? [])], names, names[0]);
    t.type(cmd.describe, 'string');
    t.type(cmd.usage, 'string');
    t.type(cmd.options, 'object');
    t.type(cmd.builder, 'function');
    t.type(cmd.handler, 'function');
  }
  t.equal(allCommands().length, COMMANDS.length);
  t.equal(findCommand('xqueue')!.command, 'queue');
  t.equal(findCommand('nope'), undefined);
});

t.test('every command declares its options with a description and a type', async (t) => {
  for (const cmd of allCommands()) {
    for (const [key, o] of Object.entries(cmd.options)) {
      t.ok(o.describe, `${cmd.command} --${key} described`);
      t.ok(o.type === 'string' || o.type === 'boolean', `${cmd.command} --${key} typed`);
    }
  }
});
