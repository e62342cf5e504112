package io.bdrp.cli;

import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/** The examples at the end of each command's {@code --help}, by the command's full name. */
final class Examples {
  private Examples() {}

  static final Map<String, List<String>> BY_COMMAND =
      Map.ofEntries(
          Map.entry(
              "bdrp",
              List.of(
                  "./bdrp demo          # a local federation with traffic and a summary",
                  "./bdrp router --config docs/router-example.yaml",
                  "./bdrp sub -r 127.0.0.1:7400 --predicate 'exists(stock)'")),
          Map.entry(
              "bdrp demo",
              List.of(
                  "./bdrp demo",
                  "./bdrp demo --topology routers-42 --messages 2000",
                  "./bdrp demo --console   # then open http://127.0.0.1:8080/")),
          Map.entry(
              "bdrp console",
              List.of(
                  "./bdrp console --router 127.0.0.1:9400",
                  "./bdrp console --router 10.0.0.1:9400 --listen 0.0.0.0:8080 --user prom"
                      + " --password-file prom.pass --cacert ca.crt")),
          Map.entry(
              "bdrp router",
              List.of(
                  "./bdrp router --config docs/router-example.yaml",
                  "BDRP_LOG_LEVEL=DEBUG ./bdrp router --config r0.yaml --epoch 1")),
          Map.entry(
              "bdrp sub",
              List.of(
                  "./bdrp sub -r 127.0.0.1:7400 --predicate 'stock = \"XYZ\" && price > 20'",
                  "./bdrp sub -r 127.0.0.1:7400 --predicate true",
                  "BDRP_ROUTER=127.0.0.1:7401 ./bdrp sub --predicate 'exists(stock)' --count 1",
                  "./bdrp sub --tls-ca ca.crt --token \"$TOKEN\" --predicate 'exists(stock)'")),
          Map.entry(
              "bdrp pub",
              List.of(
                  "echo '{\"stock\":\"XYZ\",\"price\":21.5}' | ./bdrp pub -r 127.0.0.1:7400",
                  "./bdrp pub --attr stock=XYZ --attr price=21",
                  "./bdrp pub --topic sensors/k1/temp --attr mqtt.user.value=26.5 --body 26.5",
                  "./bdrp pub --confirm --attr stock=XYZ --attr price=21")),
          Map.entry(
              "bdrp trace",
              List.of(
                  "./bdrp trace -r 127.0.0.1:7400 '{\"stock\":\"XYZ\",\"price\":21}'",
                  "./bdrp trace --json --timeout 5s '{\"stock\":\"XYZ\"}'")),
          Map.entry(
              "bdrp sim",
              List.of("./bdrp sim --routers 1000", "./bdrp sim --routers 200 --messages 5000")),
          Map.entry("bdrp topo", List.of("./bdrp topo show routers-8", "./bdrp topo --help")),
          Map.entry("bdrp topo show", List.of("./bdrp topo show routers-42")),
          Map.entry(
              "bdrp topo generate",
              List.of("./bdrp topo generate --routers 100 --out /tmp/net-100.brite")),
          Map.entry(
              "bdrp topo configs",
              List.of(
                  "printf '0 10.0.0.1\\n1 10.0.0.2\\n' > hosts.txt   # router, host",
                  "./bdrp topo configs routers-2 --hosts hosts.txt --out /tmp/configs")),
          Map.entry(
              "bdrp predicate",
              List.of(
                  "./bdrp predicate 'stock = \"XYZ\" && price > 20'",
                  "./bdrp predicate 'exists(a) || b < 3' --bloom 8192/1")),
          Map.entry("bdrp auth", List.of("./bdrp auth token --user alice")),
          Map.entry(
              "bdrp generate-completion",
              List.of(
                  "./bdrp generate-completion > ~/.bdrp-completion.bash   # bash or zsh",
                  "source ~/.bdrp-completion.bash")),
          Map.entry(
              "bdrp auth token",
              List.of(
                  "./bdrp auth token --user alice",
                  "./bdrp auth token --user metrics   # a password hash for auth.metrics")));

  /** Puts each command's examples at the end of its help. */
  static void apply(CommandLine cl) {
    List<String> lines = BY_COMMAND.get(cl.getCommandSpec().qualifiedName());
    if (lines != null) {
      String[] footer = lines.stream().map(l -> "  " + l.replace("%", "%%")).toArray(String[]::new);
      cl.getCommandSpec().usageMessage().footerHeading("%nExamples:%n").footer(footer);
    }
    for (CommandLine sub : cl.getSubcommands().values()) {
      apply(sub);
    }
  }
}
