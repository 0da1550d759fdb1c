#!/usr/bin/env node
// Generates the man pages (man1/*.1) and the bash and zsh completions from the
// CLI's command modules: the same definitions (describe, usage, yargs options)
// that `--help` renders, so the three never disagree. Needs the built CLI
// (packages/cli/dist).
//
//   node scripts/gen-share.js OUT_DIR
//   node scripts/gen-share.js --reference docs/reference.md [--check]
//
// writes OUT_DIR/man/man1/{xlurm,xrun,xbatch,xqueue,xcancel,xinfo}.1,
// OUT_DIR/bash-completion/completions/xlurm (+ one symlink per wrapper, so
// bash-completion's on-demand loader finds it under every program name) and
// OUT_DIR/zsh/site-functions/_xlurm. install.sh copies them under $PREFIX/share.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = (m) => require(path.join(root, 'packages/cli/dist', m));
const { allCommands } = cli('commands');
const { COMMON_OPTIONS } = cli('argv');
const { ABOUT, WRAPPERS } = cli('main');
const { VERSION } = require(path.join(root, 'packages/protocol/dist'));

const PROGRAMS = ['xlurm', ...Object.keys(WRAPPERS)];

// ---------------------------------------------------------------------------
// The command model, read from the definitions.

/** What a command's positional arguments are, for completion. */
const POSITIONAL = { run: 'command', batch: 'file', queue: 'alljobs', cancel: 'jobs', exclude: 'devices', include: 'devices' };
/** Options whose value is a job or device id (completed from the daemon). */
const VALUE_KIND = { cancel: 'jobs', 'device-ids': 'devices', 'exclude-device-ids': 'devices' };

function optionModel(key, o) {
  const aliases = o.alias === undefined ? [] : [].concat(o.alias);
  const names = [key, ...aliases]
    .map((n) => (n.length === 1 ? `-${n}` : `--${n}`))
    .sort((a, b) => (a.startsWith('--') ? 1 : 0) - (b.startsWith('--') ? 1 : 0));
  const describe = o.describe ?? '';
  const m = /\[possible values: ([^\]]+)\]/.exec(describe);
  return {
    key,
    names,
    describe,
    takesValue: o.type !== 'boolean',
    placeholder: key.toUpperCase().replace(/-/g, '_'),
    choices: m ? m[1].split(/,\s*/) : undefined,
    valueKind: VALUE_KIND[key],
    repeatable: /\(repeatable/.test(describe),
  };
}

function commandModel(c) {
  const options = [...Object.entries(c.options), ...Object.entries(COMMON_OPTIONS)].map(([k, o]) => optionModel(k, o));
  return {
    name: c.command,
    aliases: c.aliases ?? [],
    describe: c.describe,
    usage: c.usage,
    hidden: !!c.hidden,
    halt: !!c.haltAtNonOption,
    positional: POSITIONAL[c.command],
    options,
  };
}

const COMMANDS = allCommands().map(commandModel);
const VISIBLE = COMMANDS.filter((c) => !c.hidden);
const byName = (n) => COMMANDS.find((c) => c.name === n);

// ---------------------------------------------------------------------------
// Man pages. Options and synopses come from the model; the prose below adds
// what `--help` has no room for (examples, exit status, files).

/** How a job's end reads as an exit status (docs/behaviour.md §2.3, §20.3, §20.5, §21.6, §24.7). */
const JOB_EXIT = [
  ['0\\-255', "the job's own exit status"],
  ['128+N', 'the job was killed by signal N (137: also when the kernel killed it for exceeding its memory limit)'],
  ['130', 'cancelled (Ctrl\\-C, xcancel, SIGTERM)'],
  ['124', 'the time limit (\\-t) was reached'],
  ['70', 'stopped by the low\\-memory guard (OUT_OF_MEMORY)'],
  ['75', 'could not start now: not started within \\-\\-timeout (EXPIRED), or \\-\\-immediate and the devices are not free at once'],
  ['69', '\\-\\-immediate and the request can never fit on this host'],
  ['125', "the job's supervisor was gone before the command could start"],
];

const PROSE = {
  xlurm: {
    description: [
      'xlurm is a job scheduler for one shared Linux server with accelerators (NVIDIA GPUs, Huawei Ascend, Moore Threads, MetaX, T\\-Head PPU and Hygon HCU devices). One root daemon keeps the queue; every job runs as the user who submitted it, on devices no other job holds, and sees them through the usual visibility variables (CUDA_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES, ...).',
      'The administrator runs the daemon (normally the systemd unit xlurm.service installed by install.sh) and manages it with the subcommands below. Users submit with xrun(1) or xbatch(1) and look with xqueue(1) and xinfo(1). Each of those is the same as the xlurm subcommand of the same name (xlurm run, xlurm batch, ...).',
    ],
    exit: [
      ['0', 'success'],
      ['1', 'the daemon refused the request, or the daemon could not be reached (the message says which)'],
      ['2', 'invalid command line (usage error)'],
      ['other', 'xlurm run, and xlurm queue with \\-\\-wait or \\-\\-follow, exit as xrun(1) and xqueue(1) do'],
    ],
    examples: [
      ['sudo systemctl restart xlurm', 'restart the daemon under systemd; running jobs continue and are adopted'],
      ['sudo xlurm start \\-\\-backend nvidia \\-\\-max\\-running 8', 'start a daemon without systemd'],
      ['xlurm status', "the daemon's version, backend, uptime, exclusions and job counts"],
      ['sudo xlurm exclude 3', 'stop allocating device 3 (running jobs continue)'],
      ['sudo xlurm reload', 'apply an edited /etc/xlurm/xlurm.toml (check it first: xlurm config check)'],
    ],
  },
  start: {
    description: ['Starts the daemon in the background (its output goes to $XLURM_HOME/daemon.log) and waits until it answers. If a daemon already answers, prints "xlurm is already running" and changes nothing. Where xlurm.service is installed, use systemctl start xlurm instead.'],
  },
  daemon: {
    description: ['Runs the daemon in the foreground: this is what xlurm.service starts. SIGINT or SIGTERM stops it; running jobs continue under their supervisors and the next daemon adopts them.'],
  },
  stop: {
    description: ['Asks the daemon to exit (administrator). Running jobs continue; a later start adopts them. Under systemd, systemctl stop xlurm does the same.'],
  },
  restart: {
    description: ['Stops the daemon, refused while any job is running, and starts a new one in the background with the options given here and the configuration file (the previous daemon\'s options are not remembered). A configuration file with errors is reported before anything is stopped. Under systemd use systemctl restart xlurm, which keeps running jobs and reads /etc/default/xlurm.'],
  },
  clean: {
    description: ['Removes the job logs (jobs/<id>.log) and daemon.log while no daemon runs and no job is running. Job history stays.'],
  },
  status: {
    description: ["Prints the daemon's version and protocol, process id and uid, backend and discovered vendors, start time and uptime, max\-running, retention, the excluded device ids, the number of jobs in each state, and the scheduling policy in force: the scheduler mode, fair share, the group affinity and the limits that are set."],
  },
  exclude: {
    description: ['Stops allocating the given device ids (administrator); with several vendors, the id is excluded in each. Running jobs are not interrupted; queued jobs that need an excluded device wait. Not persisted across daemon restarts: use \-\-exclude\-device\-ids in /etc/default/xlurm for that.'],
  },
  include: {
    description: ['Makes excluded device ids available again (administrator).'],
  },
  config: {
    description: [
      'xlurm config check [FILE] validates a configuration file without changing anything and needs no daemon: by default the file the running daemon reads, else $XLURM_CONFIG, else /etc/xlurm/xlurm.toml. It prints "FILE: ok", or one line per problem, "xlurm: FILE:LINE: KEY: PROBLEM" (unknown keys, wrong types, keys that look like credentials, TOML syntax errors), and exits 1.',
      'xlurm config show prints the settings the running daemon applies, as TOML (with \\-\\-json as JSON), marking those set by a command\\-line option, which win over the file. Any user may run it: the file holds no secrets.',
    ],
    exit: [['0', 'the file is valid (check), or the settings were shown'], ['1', 'the file has errors, or no daemon answers (show)'], ['2', 'invalid command line']],
    examples: [
      ['xlurm config check /etc/xlurm/xlurm.toml', 'check an edited file before reloading'],
      ['xlurm config show \\-\\-json', 'the settings in force, for scripts'],
    ],
  },
  reload: {
    description: ['Makes the daemon read its configuration file again (administrator; also SIGHUP, or systemctl reload xlurm). A valid file applies to every later decision and prints "configuration reloaded"; running jobs are not touched, and options given when the daemon started still win. An invalid file changes nothing: its problems are printed and the exit status is 1. A change of daemon.backend is refused: restart the daemon when the queue is idle.'],
  },
  run: {
    description: [
      'Runs COMMAND (no shell is involved) as a job of the calling user, from the current directory and with the current environment, as soon as the requested devices are free. The job\'s output (stdout and stderr merged) is streamed to standard output; status lines go to standard error. Options must come before COMMAND: every word from COMMAND on is passed to it unchanged.',
      'While the job waits, xrun prints "Waiting for resources..." after a second, then "Pending: CODE: MESSAGE" (why it waits), and that line again whenever the code changes.',
      'Ctrl\\-C (SIGINT) or SIGTERM cancels the job: a pending job is dropped, a running one gets SIGTERM and, one second later, SIGKILL; xrun then exits 130.',
    ],
    exit: [
      ...JOB_EXIT,
      ['1', 'the command could not be executed, or the daemon refused the job'],
      ['2', 'invalid command line'],
    ],
    examples: [
      ['xrun \\-g 0 make test', 'a CPU\\-only job'],
      ['xrun \\-g 2 python train.py \\-\\-epochs 10', 'two devices; the options after train.py are the script\'s own'],
      ['xrun \\-i 0,3 \\-t 3600 ./bench', 'devices 0 and 3 exactly, at most one hour'],
    ],
  },
  batch: {
    description: [
      'Queues SCRIPT (read now; later edits do not matter) or, with \\-\\-wrap, a command line, and prints the new job id. The script runs as bash \\-c SCRIPT NAME ARGS..., so $0 is the job name and $1... are ARGS. Output goes to the job log: xqueue ID \\-\\-log.',
    ],
    exit: [['0', 'queued (the id is on standard output)'], ['1', 'refused by the daemon, or SCRIPT cannot be read'], ['2', 'invalid command line']],
    examples: [
      ['xbatch \\-g 1 \\-n sweep run.sh lr=0.1', 'queue a script with an argument'],
      ["xbatch \\-g 0 \\-\\-wrap 'make \\-j8'", 'queue a one\\-liner'],
    ],
  },
  queue: {
    description: [
      'Without JOB_ID: the active jobs of every user (running first, then pending), or with \\-\\-all the latest 100 jobs including finished ones. With JOB_ID: the details of one of your own jobs (root: any job), its log with \\-\\-log.',
      'STATE is PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEDOUT (TIMED_OUT in JSON) or EXPIRED (not started within its --timeout, or not at once under --immediate).',
      'Why a job waits: the details of a pending job end with "Reason: CODE: MESSAGE", and \\-\\-long adds a REASON column (the code for pending jobs, \\- otherwise) before NAME. The codes are listed in the user guide.',
    ],
    exit: [
      ['0', 'success'],
      ['job', "with \\-\\-follow: the job's exit status; with \\-\\-wait: that of the first job whose status is not 0, else 0 (the statuses of xrun(1): " + JOB_EXIT.map(([s]) => s).join(', ') + ')'],
      ['1', 'job not found, permission denied, or no daemon'],
      ['2', 'invalid command line'],
    ],
    examples: [
      ['xqueue \\-l', 'the queue with the reason each pending job waits'],
      ['xqueue \\-\\-json', 'the queue as JSON, for scripts'],
      ['xqueue 42 \\-\\-log', "job 42's output so far"],
    ],
  },
  cancel: {
    description: ['Cancels one of your jobs (root: any job). A pending job ends at once as CANCELLED; a running job gets SIGTERM, then SIGKILL one second later. Cancelling a finished job does nothing and succeeds.'],
    exit: [['0', 'cancellation requested'], ['1', 'job not found, permission denied, or no daemon'], ['2', 'invalid command line']],
  },
  info: {
    description: ['Lists the devices the daemon manages, their status (idle, busy, allocated, disabled, unhealthy, unknown, and reserved: idle but kept for the pending job shown, in the scheduler mode reserve) and the job holding each. For an unknown device the failed query and the driver\'s error are shown below it.', 'With \\-\\-pools: one row per vendor pool with its total, free, excluded and unknown devices, the largest request that could start now and the largest that could ever fit (under the host\'s group affinity), and its reservation, then each pool\'s device groups with their free devices.'],
    exit: [['0', 'success'], ['1', 'no daemon'], ['2', 'invalid command line']],
  },
};

const ENVIRONMENT = [
  ['XLURM_HOME', 'The state directory (default /var/lib/xlurm). Clients and the daemon must agree on it.'],
];
const DAEMON_ENVIRONMENT = [
  ['XLURM_NVML_LIBRARY, XLURM_DCMI_LIBRARY, XLURM_MTML_LIBRARY, XLURM_MXSML_LIBRARY, XLURM_HGML_LIBRARY, XLURM_HCU_SMI_LIBRARY, XLURM_HCU_HEALTH_TOOL',
    "Absolute paths of the vendor management libraries (and HCU's health tool), read from the daemon's environment when it starts; an override disables the search. Under systemd they are set in /etc/default/xlurm."],
  ['XLURM_DAEMON_OPTS', 'In /etc/default/xlurm: the options the systemd unit (and install.sh \\-\\-start) passes to xlurm daemon.'],
  ['XLURM_CONFIG', "The daemon's configuration file, read from the daemon's own environment (\\-\\-config wins); default /etc/xlurm/xlurm.toml. A named file must exist; a missing default file means every key has its default."],
];
const FILES = [
  ['/var/lib/xlurm/xlurm.sock', 'the daemon\'s socket'],
  ['/var/lib/xlurm/xlurm.db', 'the queue (SQLite)'],
  ['/var/lib/xlurm/jobs/', 'job logs and results'],
  ['/var/lib/xlurm/daemon.log', 'the log of a daemon started with xlurm start (under systemd: journalctl \\-u xlurm)'],
  ['/etc/default/xlurm', 'daemon settings for the systemd unit and install.sh'],
  ['/etc/xlurm/xlurm.toml', 'the daemon configuration file (TOML); see xlurm config and xlurm reload'],
];

/** Text for roff: escape backslashes, hyphens and leading control characters. */
function roff(text) {
  return text
    .replace(/\\(?![-e(&])/g, '\\e')
    .replace(/(?<!\\)-/g, '\\-')
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n');
}

function optionEntries(options) {
  const out = [];
  for (const o of options) {
    const names = o.names.map((n) => `\\fB${roff(n)}\\fR`).join(', ');
    out.push('.TP', o.takesValue ? `${names} \\fI${o.placeholder}\\fR` : names, roff(o.describe));
  }
  return out;
}

function section(title, rows) {
  const out = [`.SH ${title}`];
  for (const [k, v] of rows) out.push('.TP', `.B ${k}`, v);
  return out;
}

function header(prog, summary) {
  return [
    `.\\" Generated by scripts/gen-share.js from the xlurm command definitions; do not edit.`,
    `.TH ${prog.toUpperCase()} 1 "" "xlurm ${VERSION}" "User Commands"`,
    '.nh', // no hyphenation: options and paths stay whole and copy-pastable
    '.SH NAME',
    `${prog} \\- ${roff(summary)}`,
  ];
}

function examples(list) {
  if (!list) return [];
  const out = ['.SH EXAMPLES'];
  for (const [cmd, what] of list) out.push('.TP', `.B ${cmd}`, what);
  return out;
}

function seeAlso(prog) {
  return ['.SH SEE ALSO', PROGRAMS.filter((p) => p !== prog).map((p) => `.BR ${p} (1)`).join(',\n') + ',',
    '.BR systemctl (1).', 'The user guide, administrator guide and reference in the docs/ directory of the xlurm sources.'];
}

function wrapperPage(prog) {
  const c = byName(WRAPPERS[prog]);
  const prose = PROSE[c.name] ?? {};
  return [
    ...header(prog, c.describe),
    '.SH SYNOPSIS', `.B ${prog}`, roff(c.usage),
    '.SH DESCRIPTION', ...(prose.description ?? [c.describe]).flatMap((p) => ['.PP', p]),
    `.PP`, `${prog} is the same as \\fBxlurm ${c.name}\\fR.`,
    '.SH OPTIONS', ...optionEntries(c.options),
    ...section('EXIT STATUS', prose.exit ?? []),
    ...examples(prose.examples),
    ...section('ENVIRONMENT', ENVIRONMENT),
    ...seeAlso(prog),
  ].join('\n') + '\n';
}

function xlurmPage() {
  const out = [
    ...header('xlurm', ABOUT),
    '.SH SYNOPSIS', '.B xlurm', roff('<COMMAND> [OPTIONS]'), '.br', '.B xlurm', roff('-h | --help | -V | --version'),
    '.SH DESCRIPTION', ...PROSE.xlurm.description.flatMap((p) => ['.PP', p]),
    '.SH COMMANDS',
  ];
  for (const c of VISIBLE) {
    out.push(`.SS "${roff(`xlurm ${c.name} ${c.usage}`.trimEnd())}"`, roff(c.describe) + '.');
    if (!c.aliases.length) for (const p of PROSE[c.name]?.description ?? []) out.push('.PP', p);
    if (c.aliases.length) out.push('.br', `Also: ${c.aliases.map((a) => `\\fB${a}\\fR`).join(', ')} (see \\fB${c.aliases[0]}\\fR(1)).`);
    out.push(...optionEntries(c.options.filter((o) => !(o.key in COMMON_OPTIONS))));
  }
  out.push(
    '.SS "xlurm help [COMMAND]"', 'Print the list of commands, or the help of COMMAND.',
    '.SH OPTIONS', 'These work alone and after every command.', ...optionEntries(Object.entries(COMMON_OPTIONS).map(([k, o]) => optionModel(k, o))),
    ...section('EXIT STATUS', PROSE.xlurm.exit),
    ...examples(PROSE.xlurm.examples),
    ...section('ENVIRONMENT', [...ENVIRONMENT, ...DAEMON_ENVIRONMENT]),
    ...section('FILES', FILES),
    ...seeAlso('xlurm'),
  );
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// Completion: shared helpers.

const IDS_AWK = {
  // xqueue --json / xinfo --json are pretty-printed with two-space indents:
  // a job's "id" is at depth 2 and its owner's "uid" at depth 3; a device's id at depth 3.
  jobs: `/^    "id": /{ id = $2; sub(/,$/, "", id) } /^      "uid": /{ u = $2; sub(/,$/, "", u); if (uid == 0 || u == uid) print id }`,
  devices: `/^      "id": /{ v = $2; sub(/,$/, "", v); print v }`,
};

/** Command names as typed after `xlurm` (aliases too), mapped to the command. */
function commandWords() {
  const words = [];
  for (const c of VISIBLE) for (const n of [c.name, ...c.aliases]) words.push([n, c.name]);
  return words;
}

// ---------------------------------------------------------------------------
// bash

const shq = (s) => `'${s.replace(/'/g, "'\\''")}'`;

function bashCompletion() {
  const words = commandWords();
  const wrappers = Object.entries(WRAPPERS).map(([w, c]) => `${w}) cmd=${c} ;;`).join(' ');
  const perCommand = VISIBLE.map((c) => {
    const opts = c.options.flatMap((o) => o.names).join(' ');
    const valopts = c.options.filter((o) => o.takesValue).flatMap((o) => o.names).join(' ');
    return `    ${c.name}) opts=${shq(opts)} valopts=${shq(valopts)} positional=${c.positional ?? ''} halt=${c.halt ? 1 : 0} ;;`;
  }).join('\n');
  const values = [];
  for (const c of VISIBLE) {
    for (const o of c.options) {
      if (!o.choices && !o.valueKind) continue;
      const body = o.choices ? `COMPREPLY=($(compgen -W ${shq(o.choices.join(' '))} -- "$cur"))` : `_xlurm_complete_ids ${o.valueKind} "$cur"`;
      values.push(`    ${o.names.map((n) => `${c.name}:${n}`).join('|')}) ${body} ;;`);
    }
  }
  return `# bash completion for ${PROGRAMS.join(', ')}.
# Generated by scripts/gen-share.js from the xlurm ${VERSION} command definitions; do not edit.

# Ids for completion from one cheap local request (at most 3 s, or
# $XLURM_COMPLETION_TIMEOUT seconds): "jobs" are the
# caller's active jobs, "alljobs" also the recently finished ones (root: everyone's),
# "devices" the daemon's device ids.
_xlurm_ids() {
  local json
  case $1 in
    jobs) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xqueue --json 2>/dev/null) ;;
    alljobs) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xqueue --all --json 2>/dev/null) ;;
    devices) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xinfo --json 2>/dev/null) ;;
  esac || return 0
  case $1 in
    devices) awk '${IDS_AWK.devices}' <<<"$json" ;;
    *) awk -v uid="\${EUID:-$(id -u)}" '${IDS_AWK.jobs}' <<<"$json" ;;
  esac
}

_xlurm_complete_ids() {
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$(_xlurm_ids "$1")" -- "$2"))
}

_xlurm() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local prog=\${COMP_WORDS[0]##*/} cmd= first=1 i w
  COMPREPLY=()
  case $prog in
    ${wrappers}
    *)
      if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W ${shq([...words.map(([w]) => w), 'help', '-h', '--help', '-V', '--version'].join(' '))} -- "$cur"))
        return 0
      fi
      first=2
      case \${COMP_WORDS[1]} in
        help) (( COMP_CWORD == 2 )) && COMPREPLY=($(compgen -W ${shq(VISIBLE.map((c) => c.name).join(' '))} -- "$cur")); return 0 ;;
${words.map(([w, c]) => `        ${w}) cmd=${c} ;;`).join('\n')}
        *) return 0 ;;
      esac ;;
  esac
  local opts valopts positional halt
  case $cmd in
${perCommand}
  esac
  # The first positional word, if one comes before the word being completed
  # (an option's value is not one; \`--\` ends the options).
  local pos=0
  for (( i = first; i < COMP_CWORD; i++ )); do
    w=\${COMP_WORDS[i]}
    if [[ $w == -- ]]; then pos=$((i + 1)); break; fi
    if [[ $w == -* ]]; then
      [[ " $valopts " == *" $w "* ]] && (( i++ ))
      continue
    fi
    pos=$i; break
  done
  if (( pos > 0 && pos < COMP_CWORD )) && (( halt )); then
    # Everything after xrun's COMMAND (or xbatch's SCRIPT) belongs to it.
    if [[ $positional == command ]] && declare -F _command_offset >/dev/null; then
      _command_offset "$pos"
    else
      compopt -o default 2>/dev/null
    fi
    return 0
  fi
  if [[ " $valopts " == *" $prev "* ]]; then
    case $cmd:$prev in
${values.join('\n')}
    esac
    return 0
  fi
  if [[ $cur == -* ]] && (( pos == 0 || !halt )); then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return 0
  fi
  case $positional in
    command) (( pos == 0 || pos == COMP_CWORD )) && COMPREPLY=($(compgen -c -- "$cur")) ;;
    file) compopt -o default 2>/dev/null ;;
    jobs|alljobs|devices) _xlurm_complete_ids "$positional" "$cur" ;;
  esac
  return 0
}

complete -F _xlurm ${PROGRAMS.join(' ')}
`;
}

// ---------------------------------------------------------------------------
// zsh

/** An _arguments explanation: brackets and colons are special there. */
const zdesc = (s) => s.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1').replace(/'/g, "'\\''");

function zshOptionSpecs(c) {
  return c.options.map((o) => {
    const help = o.key === 'help' || o.key === 'version';
    const excl = help ? '(- *)' : o.repeatable ? '*' : `(${o.names.join(' ')})`;
    const names = o.names.length > 1 ? `{${o.names.join(',')}}` : o.names[0];
    let action = '';
    if (o.takesValue) {
      const act = o.choices ? `(${o.choices.join(' ')})` : o.valueKind ? `_xlurm_ids ${o.valueKind}` : ' ';
      action = `:${o.placeholder.toLowerCase().replace(/_/g, ' ')}:${act}`;
    }
    return `'${excl}'${names}'[${zdesc(o.describe)}]${action}'`;
  });
}

function zshPositionals(c) {
  switch (c.positional) {
    case 'command': return [`'1:command:_command_names -e'`, `'*::arguments:_normal'`];
    case 'file': return [`'1:script:_files'`, `'*:script argument:_files'`];
    case 'jobs': case 'alljobs': return [`'1:job id:_xlurm_ids ${c.positional}'`];
    case 'devices': return [`'*:device id:_xlurm_ids devices'`];
    default: return [];
  }
}

function zshCompletion() {
  const fns = VISIBLE.map((c) => {
    const specs = [...zshOptionSpecs(c), ...zshPositionals(c)];
    const flags = c.halt ? '-s -S -A "-*"' : '-s -S';
    return `_xlurm_cmd_${c.name}() {\n  _arguments ${flags} \\\n    ${specs.join(' \\\n    ')}\n}`;
  }).join('\n\n');
  const described = commandWords().map(([w, c]) => `'${w}:${zdesc(byName(c).describe)}'`).join('\n    ');
  return `#compdef ${PROGRAMS.join(' ')}
# zsh completion for ${PROGRAMS.join(', ')}.
# Generated by scripts/gen-share.js from the xlurm ${VERSION} command definitions; do not edit.

# Ids from one cheap local request (at most 3 s, or $XLURM_COMPLETION_TIMEOUT); see the bash completion.
# As an _arguments action it gets compadd's options first: the kind is the last argument.
_xlurm_ids() {
  local what=\${@[-1]} json
  local -a ids
  case $what in
    jobs) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xqueue --json 2>/dev/null) ;;
    alljobs) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xqueue --all --json 2>/dev/null) ;;
    devices) json=$(timeout "\${XLURM_COMPLETION_TIMEOUT:-3}" xinfo --json 2>/dev/null) ;;
  esac
  if [[ $what == devices ]]; then
    ids=(\${(f)"$(print -r -- "$json" | awk '${IDS_AWK.devices}')"})
  else
    ids=(\${(f)"$(print -r -- "$json" | awk -v uid=$EUID '${IDS_AWK.jobs}')"})
  fi
  compadd "\${@[1,-2]}" -a ids
}

_xlurm_commands() {
  local -a cmds
  cmds=(
    ${described}
    'help:Print the list of commands or the help of one'
  )
  _describe -t commands 'xlurm command' cmds
}

${fns}

_xlurm_main() {
  local curcontext=$curcontext state line
  _arguments -C \\
    '(- *)'{-h,--help}'[Print help]' \\
    '(- *)'{-V,--version}'[Print version]' \\
    '1: :_xlurm_commands' \\
    '*:: :->args'
  [[ $state == args ]] || return
  curcontext=\${curcontext%:*:*}:xlurm-$words[1]:
  case $words[1] in
${commandWords().map(([w, c]) => `    ${w}) _xlurm_cmd_${c} ;;`).join('\n')}
    help) _xlurm_commands ;;
  esac
}

_xlurm() {
  case $service in
${Object.entries(WRAPPERS).map(([w, c]) => `    ${w}) _xlurm_cmd_${c} ;;`).join('\n')}
    *) _xlurm_main ;;
  esac
}

_xlurm "$@"
`;
}

// ---------------------------------------------------------------------------

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode: 0o644 });
}

// ---------------------------------------------------------------------------
// docs/reference.md: the same model and prose as the man pages, in Markdown.

/** Prose written for roff (`\\-`) as Markdown text. */
const md = (s) => s.replace(/\\-/g, '-').replace(/\\e/g, '\\').replace(/\|/g, '\\|');

function mdOptions(options) {
  if (!options.length) return ['No options.', ''];
  return ['| Option | Description |', '| --- | --- |',
    ...options.map((o) => `| \`${o.names.join(', ')}${o.takesValue ? ` <${o.placeholder}>` : ''}\` | ${md(o.describe)} |`), ''];
}

function mdTable(head, rows) {
  return rows.length ? [`| ${head[0]} | ${head[1]} |`, '| --- | --- |', ...rows.map(([k, v]) => `| ${md(k)} | ${md(v)} |`), ''] : [];
}

function mdCommand(title, c, prog) {
  const prose = PROSE[c.name] ?? {};
  const out = [`## ${title}`, '', '```', `${prog} ${c.usage}`.trimEnd(), '```', '', `${c.describe}.`, ''];
  for (const p of prose.description ?? []) out.push(md(p), '');
  if (c.aliases.length) out.push(`The same as \`xlurm ${c.name}\` (or \`xlurm ${c.aliases.join('`, `xlurm ')}\`).`, '');
  out.push(...mdOptions(c.options));
  if (prose.exit) out.push('Exit status:', '', ...mdTable(['Status', 'Meaning'], prose.exit));
  if (prose.examples) out.push('Examples:', '', '```sh', ...prose.examples.map(([cmd, what]) => `${md(cmd)}    # ${md(what)}`), '```', '');
  return out;
}

function reference() {
  const out = [
    '# Command reference', '',
    '<!-- generated by `node scripts/gen-share.js --reference docs/reference.md` from the command definitions',
    '     (packages/cli/src/commands), the same source as `--help` and the man pages; do not edit -->', '',
    `xlurm ${VERSION}. Every program also accepts \`-h, --help\` and \`-V, --version\`, and every failure other than a`,
    'usage error prints `xlurm: <message>` on standard error and exits 1; usage errors print `error: …` and exit 2.',
    'Options of `xrun` and `xbatch` must come before the command or script. Man pages: `man xlurm`, `man xrun`, …', '',
  ];
  const wrapperOf = Object.fromEntries(Object.entries(WRAPPERS).map(([w, c]) => [c, w]));
  for (const c of VISIBLE.filter((x) => wrapperOf[x.name])) out.push(...mdCommand(wrapperOf[c.name], c, wrapperOf[c.name]));
  out.push('## xlurm', '', '```', 'xlurm <COMMAND> [OPTIONS]', '```', '', `${ABOUT}.`, '', ...PROSE.xlurm.description.map((p) => md(p) + '\n'));
  out.push('Exit status:', '', ...mdTable(['Status', 'Meaning'], PROSE.xlurm.exit));
  for (const c of VISIBLE.filter((x) => !wrapperOf[x.name])) {
    out.push(...mdCommand(`xlurm ${c.name}`, c, `xlurm ${c.name}`).map((l) => (l.startsWith('## ') ? `#${l}` : l)));
  }
  out.push('## Environment', '', ...mdTable(['Variable', 'Meaning'], [...ENVIRONMENT, ...DAEMON_ENVIRONMENT]));
  out.push('## Files', '', ...mdTable(['Path', 'What'], FILES));
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--reference' && args[1]) {
    const text = reference();
    if (args[2] === '--check') {
      const current = fs.existsSync(args[1]) ? fs.readFileSync(args[1], 'utf8') : '';
      if (current !== text) {
        process.stderr.write(`${args[1]} is out of date: run node scripts/gen-share.js --reference ${args[1]}\n`);
        process.exit(1);
      }
      return;
    }
    write(args[1], text);
    return;
  }
  const out = args[0];
  if (!out || out.startsWith('-')) {
    process.stderr.write('usage: node scripts/gen-share.js OUT_DIR | --reference FILE [--check]\n');
    process.exit(2);
  }
  write(path.join(out, 'man/man1/xlurm.1'), xlurmPage());
  for (const prog of Object.keys(WRAPPERS)) write(path.join(out, `man/man1/${prog}.1`), wrapperPage(prog));
  const bashDir = path.join(out, 'bash-completion/completions');
  write(path.join(bashDir, 'xlurm'), bashCompletion());
  for (const prog of Object.keys(WRAPPERS)) {
    fs.rmSync(path.join(bashDir, prog), { force: true });
    fs.symlinkSync('xlurm', path.join(bashDir, prog));
  }
  write(path.join(out, 'zsh/site-functions/_xlurm'), zshCompletion());
}

main();
