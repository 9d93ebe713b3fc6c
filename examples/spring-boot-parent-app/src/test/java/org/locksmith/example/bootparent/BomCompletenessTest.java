package org.locksmith.example.bootparent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * locksmith-bom, which an application imports, manages every module the build publishes (each reactor module that is
 * not marked {@code maven.deploy.skip}) and the ShedLock artifacts an application on lock-shedlock needs, at the
 * version lock-shedlock is built with.
 */
class BomCompletenessTest {
    private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();

    @Test
    void theBomManagesEveryPublishedModuleAndShedLockSpring() throws Exception {
        Document parent = parse(ROOT.resolve("pom.xml"));
        Map<String, String> managed = managed(parse(ROOT.resolve("locksmith-bom/pom.xml")));
        List<String> published = new ArrayList<>();
        for (Element module : children(first(parent.getDocumentElement(), "modules"), "module")) {
            Document pom = parse(ROOT.resolve(module.getTextContent().trim()).resolve("pom.xml"));
            Element root = pom.getDocumentElement();
            String packaging = text(root, "packaging", "jar");
            Element properties = first(root, "properties");
            boolean skipped = properties != null && "true".equals(text(properties, "maven.deploy.skip", "false"));
            if (!skipped && packaging.equals("jar")) {
                published.add(text(root, "artifactId", null));
            }
        }
        assertThat(published).contains("lock-api", "lock-redis", "lock-spring-boot-starter");
        for (String artifact : published) {
            assertThat(managed)
                    .as("locksmith-bom manages org.locksmith:" + artifact)
                    .containsKey("org.locksmith:" + artifact);
        }
        String shedlock = text(first(parent.getDocumentElement(), "properties"), "shedlock.version", null);
        assertThat(managed)
                .as("ShedLock at the parent's shedlock.version")
                .containsEntry("net.javacrumbs.shedlock:shedlock-spring", shedlock)
                .containsEntry("net.javacrumbs.shedlock:shedlock-core", shedlock);
    }

    private static Map<String, String> managed(Document bom) {
        Map<String, String> managed = new TreeMap<>();
        Element dependencies = first(first(bom.getDocumentElement(), "dependencyManagement"), "dependencies");
        for (Element d : children(dependencies, "dependency")) {
            managed.put(text(d, "groupId", null) + ":" + text(d, "artifactId", null), text(d, "version", null));
        }
        return managed;
    }

    private static Document parse(Path pom) throws Exception {
        assertThat(pom).exists();
        try (var in = Files.newInputStream(pom)) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    private static Element first(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    private static String text(Element parent, String name, String otherwise) {
        Element e = first(parent, name);
        return e == null ? otherwise : e.getTextContent().trim();
    }
}
