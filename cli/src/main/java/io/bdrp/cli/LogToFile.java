package io.bdrp.cli;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * Sends a logger's lines (and its children's) to a file instead of stderr while open: the routers a
 * command runs in its own JVM log to the run folder, and the terminal keeps the command's own
 * output.
 */
final class LogToFile implements AutoCloseable {
  private final Logger logger;
  private final FileAppender<ILoggingEvent> appender;
  private final boolean additive;

  private LogToFile(Logger logger, FileAppender<ILoggingEvent> appender) {
    this.logger = logger;
    this.appender = appender;
    this.additive = logger.isAdditive();
  }

  /** Starts sending {@code loggerName}'s lines to {@code file}. */
  static LogToFile open(String loggerName, Path file) {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(ctx);
    encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level %logger{0} %msg%n");
    encoder.start();
    FileAppender<ILoggingEvent> a = new FileAppender<>();
    a.setContext(ctx);
    a.setName("file " + file);
    a.setFile(file.toString());
    a.setEncoder(encoder);
    a.start();
    Logger l = ctx.getLogger(loggerName);
    LogToFile f = new LogToFile(l, a);
    l.addAppender(a);
    l.setAdditive(false);
    return f;
  }

  @Override
  public void close() {
    logger.setAdditive(additive);
    logger.detachAppender(appender);
    appender.stop();
  }
}
