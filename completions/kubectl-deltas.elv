
use builtin;
use str;

set edit:completion:arg-completer[kubectl-deltas] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kubectl-deltas'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kubectl-deltas'= {
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand watch 'Run an informer on RESOURCE and show every popped Deltas batch (or, with `--store undelta`, every push of an UndeltaStore) as a live timeline'
            cand index 'Build the informer cache once and answer an Indexer query'
            cand record 'Run an informer on a cluster and record every server answer to a file'
            cand replay 'Replay a recording through the real Reflector and DeltaFIFO, offline'
            cand completion 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-deltas;watch'= {
            cand -o 'Output format'
            cand --output 'Output format'
            cand --object 'How much of each object jsonl, json and yaml carry'
            cand --max-batches 'Exit after N batches (N pushes with `--store undelta`)'
            cand --handler-delay 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue'
            cand --handler 'Register an event handler (repeatable), as a controller does on a shared informer: `resync=DURATION` is its own resync period (AddEventHandlerWithResyncPeriod; 0: none; default: the informer''s --resync, as AddEventHandler), `delay=DURATION` how long each call takes. Without it, one handler named `handler` taking --handler-delay'
            cand --informer 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue''s lock, so the Reflector waits for it)'
            cand --view 'What the output shows: the queue''s pops, what each handler received, or both (default: both when several handlers run or one takes time, else pops)'
            cand --query 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand --cluster 'The kubeconfig cluster to use'
            cand --user 'The kubeconfig user to use'
            cand --cache-dir 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server'
            cand -n 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand --namespace 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand -l 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --selector 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --field-selector 'Field selector, e.g. `status.phase=Running` (=, == and != only)'
            cand --request-timeout 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)'
            cand --client-go 'Run the informer a client-go version builds by default: its queue, pops, relist deltas and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop`, `--legacy-sync` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32, the last DeltaFIFO informer'
            cand --resync 'Resync period (`30s`, `5m`; `0` disables). As in client-go, a handler''s period below 1s is raised to 1s, the informer''s own check period is not'
            cand --legacy-sync 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)'
            cand --unlock-while-processing 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more'
            cand --index 'Add an index to the Indexer (repeatable): namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner'
            cand --fifo 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)'
            cand --batch-pop 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)'
            cand --store 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`'
            cand --page-size 'Objects per page of every list, relists included, as client-go''s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)'
            cand --watch-timeout 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)'
            cand --watch-list 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)'
            cand --verify-every 'Compare the cache with the server every DURATION and report drift (`0` disables; below 1s means 1s)'
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand --show-secret-data 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)'
            cand --since-now 'Do not print the initial list''s batches (they are still applied to the cache), or its push with `--store undelta`'
            cand --until-synced 'Exit once the cache has synced and the initial batches are printed'
            cand -q 'No progress bar, status footer or summary table on stderr'
            cand --quiet 'No progress bar, status footer or summary table on stderr'
            cand -A 'Watch every namespace'
            cand --all-namespaces 'Watch every namespace'
            cand --consistent-list 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
            cand --no-strip-managed-fields 'Keep managedFields (stripped by default, as many informers do with a transform)'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-deltas;index'= {
            cand --by 'The index to query: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner'
            cand --value 'Only objects indexed under this value (repeatable); without it, every value with its count'
            cand --replay 'Build the cache from a recording instead of a cluster (`-` for stdin). The cluster''s flags and `--resync` do not apply: the recording says what was listed and when it resynced'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand --cluster 'The kubeconfig cluster to use'
            cand --user 'The kubeconfig user to use'
            cand --cache-dir 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server'
            cand -n 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand --namespace 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand -l 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --selector 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --field-selector 'Field selector, e.g. `status.phase=Running` (=, == and != only)'
            cand --request-timeout 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)'
            cand --client-go 'Run the informer a client-go version builds by default: its queue, pops, relist deltas and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop`, `--legacy-sync` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32, the last DeltaFIFO informer'
            cand --resync 'Resync period (`30s`, `5m`; `0` disables). As in client-go, a handler''s period below 1s is raised to 1s, the informer''s own check period is not'
            cand --legacy-sync 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)'
            cand --unlock-while-processing 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more'
            cand --index 'Add an index to the Indexer (repeatable): namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner'
            cand --fifo 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)'
            cand --batch-pop 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)'
            cand --page-size 'Objects per page of every list, relists included, as client-go''s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)'
            cand --watch-timeout 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)'
            cand --watch-list 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)'
            cand --verify-every 'Compare the cache with the server every DURATION and report drift (`0` disables; below 1s means 1s)'
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand --keys-only 'Print the store keys (`namespace/name`) of the objects under the `--value`s, one per line, instead of an `-o` format'
            cand --fail-empty 'Exit with code 4 when nothing matches: no object under any `--value`, or, without `--value`, no object with a value at all'
            cand --show-secret-data 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, indexing Secrets by them is refused)'
            cand -q 'No notes on stderr (a retry, an empty answer); errors still go there'
            cand --quiet 'No notes on stderr (a retry, an empty answer); errors still go there'
            cand -A 'Watch every namespace'
            cand --all-namespaces 'Watch every namespace'
            cand --consistent-list 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
            cand --no-strip-managed-fields 'Keep managedFields (stripped by default, as many informers do with a transform)'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-deltas;record'= {
            cand -f 'Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The timeline goes to stderr. The file is created once the server first answers, and an existing one is refused unless `--force`'
            cand --file 'Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The timeline goes to stderr. The file is created once the server first answers, and an existing one is refused unless `--force`'
            cand --duration 'Stop after this long (default: until Ctrl-C)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand --cluster 'The kubeconfig cluster to use'
            cand --user 'The kubeconfig user to use'
            cand --cache-dir 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server'
            cand -n 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand --namespace 'Namespace to watch (default: the context''s namespace, then `default`)'
            cand -l 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --selector 'Label selector, e.g. `app=web,tier!=db`, `env in (prod,staging)`, `!canary`'
            cand --field-selector 'Field selector, e.g. `status.phase=Running` (=, == and != only)'
            cand --request-timeout 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)'
            cand --client-go 'Run the informer a client-go version builds by default: its queue, pops, relist deltas and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop`, `--legacy-sync` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32, the last DeltaFIFO informer'
            cand --resync 'Resync period (`30s`, `5m`; `0` disables). As in client-go, a handler''s period below 1s is raised to 1s, the informer''s own check period is not'
            cand --legacy-sync 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)'
            cand --unlock-while-processing 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more'
            cand --index 'Add an index to the Indexer (repeatable): namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner'
            cand --fifo 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)'
            cand --batch-pop 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)'
            cand --store 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`'
            cand --page-size 'Objects per page of every list, relists included, as client-go''s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)'
            cand --watch-timeout 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)'
            cand --watch-list 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)'
            cand --verify-every 'Compare the cache with the server every DURATION and report drift (`0` disables; below 1s means 1s)'
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand --force 'Overwrite the `-f` file if it exists'
            cand -q 'Do not render the timeline on stderr'
            cand --quiet 'Do not render the timeline on stderr'
            cand --show-secret-data 'Keep Secret values (data, stringData and the kubectl last-applied-configuration annotation) in the recording (redacted by default)'
            cand -A 'Watch every namespace'
            cand --all-namespaces 'Watch every namespace'
            cand --consistent-list 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
            cand --no-strip-managed-fields 'Keep managedFields (stripped by default, as many informers do with a transform)'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-deltas;replay'= {
            cand --speed 'Replay in real time divided by X (`--speed 1` is real time) instead of instantly, with the consumer popping concurrently as live (`--handler-delay` then counts in recorded time)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --object 'How much of each object jsonl, json and yaml carry'
            cand --max-batches 'Exit after N batches (N pushes with `--store undelta`)'
            cand --handler-delay 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue'
            cand --handler 'Register an event handler (repeatable), as a controller does on a shared informer: `resync=DURATION` is its own resync period (AddEventHandlerWithResyncPeriod; 0: none; default: the informer''s --resync, as AddEventHandler), `delay=DURATION` how long each call takes. Without it, one handler named `handler` taking --handler-delay'
            cand --informer 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue''s lock, so the Reflector waits for it)'
            cand --view 'What the output shows: the queue''s pops, what each handler received, or both (default: both when several handlers run or one takes time, else pops)'
            cand --query 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`'
            cand --client-go 'Run the informer a client-go version builds by default: its queue, pops, relist deltas and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop`, `--legacy-sync` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32, the last DeltaFIFO informer'
            cand --resync 'Resync period (`30s`, `5m`; `0` disables). As in client-go, a handler''s period below 1s is raised to 1s, the informer''s own check period is not'
            cand --legacy-sync 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)'
            cand --unlock-while-processing 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more'
            cand --index 'Add an index to the Indexer (repeatable): namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner'
            cand --fifo 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)'
            cand --batch-pop 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)'
            cand --store 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`'
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand --show-secret-data 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)'
            cand --since-now 'Do not print the initial list''s batches (they are still applied to the cache), or its push with `--store undelta`'
            cand --until-synced 'Exit once the cache has synced and the initial batches are printed'
            cand -q 'No progress bar, status footer or summary table on stderr'
            cand --quiet 'No progress bar, status footer or summary table on stderr'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-deltas;completion'= {
            cand --color 'When to use colours (NO_COLOR in the environment means never, unless `always`)'
            cand -v 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand --verbose 'Log to stderr: -v for the reflector''s steps, -vv for requests, -vvv for everything'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-deltas;help'= {
            cand watch 'Run an informer on RESOURCE and show every popped Deltas batch (or, with `--store undelta`, every push of an UndeltaStore) as a live timeline'
            cand index 'Build the informer cache once and answer an Indexer query'
            cand record 'Run an informer on a cluster and record every server answer to a file'
            cand replay 'Replay a recording through the real Reflector and DeltaFIFO, offline'
            cand completion 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-deltas;help;watch'= {
        }
        &'kubectl-deltas;help;index'= {
        }
        &'kubectl-deltas;help;record'= {
        }
        &'kubectl-deltas;help;replay'= {
        }
        &'kubectl-deltas;help;completion'= {
        }
        &'kubectl-deltas;help;help'= {
        }
    ]
    $completions[$command]
}
