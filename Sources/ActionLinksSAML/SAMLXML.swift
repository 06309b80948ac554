internal import ActionLinksXMLSec

/// The namespaces a SAML 2.0 response uses.
enum SAMLNamespace {
    static let protocol_ = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertion = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let signature = "http://www.w3.org/2000/09/xmldsig#"
    static let xml = "http://www.w3.org/XML/1998/namespace"
    static let schemaInstance = "http://www.w3.org/2001/XMLSchema-instance"
}

/// libxml2 and xmlsec, initialised once for the process.
enum XMLSecurity {
    /// 0 when initialised; the failing step otherwise (the library is then unusable).
    static let status: Int32 = actionlinks_xmlsec_initialize()
}

/// A parsed XML document (libxml2), freed with the value. Not shared between threads.
final class XMLDocument {
    /// libxml2's `xmlDocPtr`, opaque here (see ActionLinksXMLSec.h for why).
    let pointer: OpaquePointer

    /// Parses `bytes` as XML without the network, DTD loading or entity substitution, quietly;
    /// `nil` when it is not well-formed. Nesting is limited by libxml2 (256 levels).
    init?(parsing bytes: [UInt8]) {
        guard XMLSecurity.status == 0, !bytes.isEmpty, bytes.count < Int(Int32.max) else { return nil }
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                actionlinks_xml_parse($0, Int32(buffer.count))
            }
        }
        guard let document else { return nil }
        pointer = document
    }

    deinit { actionlinks_xml_free_document(pointer) }

    /// Whether the document declares a DOCTYPE (which could declare IDs and entities).
    var hasDTD: Bool { actionlinks_xml_has_dtd(pointer) != 0 }

    var root: XMLElement? { actionlinks_xml_root(pointer).map(XMLElement.init) }
}

/// A libxml2 node (libxml2's `xmlNodePtr`, opaque here) and the kinds the SAML code reads.
private enum XMLNode {
    static func kind(_ node: OpaquePointer) -> Int32 { actionlinks_xml_node_kind(node) }

    static func isElement(_ node: OpaquePointer) -> Bool { kind(node) == Int32(ACTIONLINKS_XML_ELEMENT) }

    static func isText(_ node: OpaquePointer) -> Bool {
        let kind = kind(node)
        return kind == Int32(ACTIONLINKS_XML_TEXT) || kind == Int32(ACTIONLINKS_XML_CDATA)
    }

    static func string(_ text: UnsafePointer<UInt8>?) -> String? { text.map { String(cString: $0) } }

    /// The node's children (any kind), in order.
    static func children(_ node: OpaquePointer) -> [OpaquePointer] {
        var found: [OpaquePointer] = []
        var child = actionlinks_xml_first_child(node)
        while let current = child {
            found.append(current)
            child = actionlinks_xml_next_sibling(current)
        }
        return found
    }
}

/// An element of an ``XMLDocument`` (valid while the document lives).
struct XMLElement {
    /// libxml2's `xmlNodePtr` of an element.
    let node: OpaquePointer

    init(_ node: OpaquePointer) { self.node = node }

    var name: String { XMLNode.string(actionlinks_xml_node_name(node)) ?? "" }
    var namespace: String? { XMLNode.string(actionlinks_xml_node_namespace(node)) }

    func `is`(_ name: String, in namespace: String) -> Bool { self.name == name && self.namespace == namespace }

    /// The element children, in order.
    var children: [XMLElement] { XMLNode.children(node).filter(XMLNode.isElement).map(XMLElement.init) }

    func children(_ name: String, in namespace: String) -> [XMLElement] { children.filter { $0.is(name, in: namespace) } }

    func child(_ name: String, in namespace: String) -> XMLElement? { children.first { $0.is(name, in: namespace) } }

    var parent: XMLElement? {
        guard let parent = actionlinks_xml_parent(node), XMLNode.isElement(parent) else { return nil }
        return XMLElement(parent)
    }

    /// Every element below this one (not itself), depth first.
    var descendants: [XMLElement] {
        var found: [XMLElement] = []
        var stack = children.reversed() as [XMLElement]
        while let next = stack.popLast() {
            found.append(next)
            stack.append(contentsOf: next.children.reversed())
        }
        return found
    }

    /// The element's attributes, in order, as libxml2's `xmlAttrPtr`s.
    private var attributeNodes: [OpaquePointer] {
        var found: [OpaquePointer] = []
        var property = actionlinks_xml_first_attribute(node)
        while let current = property {
            found.append(current)
            property = actionlinks_xml_next_attribute(current)
        }
        return found
    }

    /// The attribute without a namespace called `name`, as the node libxml2 keeps.
    func attributeNode(_ name: String) -> OpaquePointer? {
        attributeNodes.first {
            actionlinks_xml_attribute_namespace($0) == nil && XMLNode.string(actionlinks_xml_attribute_name($0)) == name
        }
    }

    /// The value of the attribute without a namespace called `name`.
    func attribute(_ name: String) -> String? { attributeNode(name).map(Self.value) }

    /// The attributes in a namespace, as (local name, value).
    func attributes(in namespace: String) -> [(String, String)] {
        attributeNodes.compactMap { attribute in
            guard XMLNode.string(actionlinks_xml_attribute_namespace(attribute)) == namespace,
                let name = XMLNode.string(actionlinks_xml_attribute_name(attribute))
            else { return nil }
            return (name, Self.value(attribute))
        }
    }

    /// The text of the element's own text and CDATA children, joined (comments and child elements
    /// left out: exclusive canonicalisation drops comments, so a comment inside a signed value must
    /// not cut it short).
    var text: String {
        XMLNode.children(node).filter(XMLNode.isText).compactMap { XMLNode.string(actionlinks_xml_node_content($0)) }.joined()
    }

    /// Every text below the element, in document order (comments left out).
    var deepText: String {
        var text = ""
        var stack = Array(XMLNode.children(node).reversed())
        while let current = stack.popLast() {
            if XMLNode.isText(current) {
                text += XMLNode.string(actionlinks_xml_node_content(current)) ?? ""
            } else if XMLNode.isElement(current) {
                stack.append(contentsOf: XMLNode.children(current).reversed())
            }
        }
        return text
    }

    private static func value(_ attribute: OpaquePointer) -> String {
        var value = ""
        var child = actionlinks_xml_attribute_value(attribute)
        while let text = child {
            value += XMLNode.string(actionlinks_xml_node_content(text)) ?? ""
            child = actionlinks_xml_next_sibling(text)
        }
        return value
    }
}
